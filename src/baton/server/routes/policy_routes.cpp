// The routes of the live policy (issue 51): GET /v1/admin/policy (the arms and the one
// running), POST /v1/admin/policy {"policy": NAME} (switch by hand: waits for the bursts in
// flight), POST /v1/admin/reload (the configuration read again, as at start: its turn is
// applied when it is one of the arms), GET /v1/experiment (a live experiment's state). The
// admin routes need the server's API key: without one configured they answer 403.
#include <nlohmann/json.hpp>

#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"
#include "baton/server/routes/router.h"

namespace baton {
namespace {

using nlohmann::json;

// The name asked for in POST /v1/admin/policy's body; ApiError 400 naming the field.
std::string policy_asked(const std::string& body) {
  const json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    throw ApiError(400, "the body must be a JSON object", "invalid_request_error");
  const auto policy = request.find("policy");
  if (policy == request.end() || !policy->is_string())
    throw ApiError(400, "'policy' must be a string: an arm of GET /v1/admin/policy",
                   "invalid_request_error", "invalid_value", "policy");
  return policy->get<std::string>();
}

}  // namespace

std::optional<HttpResponse> Router::policy_route(const HttpRequest& request) {
  const std::string& path = request.target;
  if (path == "/v1/experiment" && request.method == "GET") {
    std::optional<json> state = context_.experiment ? context_.experiment() : std::nullopt;
    if (!state)
      throw ApiError(404, "no experiment runs (start baton serve with --experiment FILE)",
                     "invalid_request_error", "not_found");
    return json_response(200, *state);
  }
  const bool reload = path == "/v1/admin/reload" && request.method == "POST";
  if (!reload &&
      (path != "/v1/admin/policy" || (request.method != "GET" && request.method != "POST")))
    return std::nullopt;
  if (context_.api_key.empty())
    throw ApiError(403, "the admin routes need the server's API key: start it with --api-key",
                   "permission_error");
  LivePolicy* live = context_.live_policy;
  if (request.method == "GET") {
    return json_response(200,
                         {{"policy", live ? live->current() : context_.policy},
                          {"arms", live ? json(live->arms()) : json::array({context_.policy})}});
  }
  if (!live)
    throw ApiError(409, "this server's policy cannot change while it runs",
                   "invalid_request_error");
  const std::optional<json> experiment = context_.experiment ? context_.experiment() : std::nullopt;
  if (experiment && !experiment->value("ended", true))
    throw ApiError(409, "a live experiment decides the policy until it ends (GET /v1/experiment)",
                   "invalid_request_error");
  const std::string name = reload ? reloaded_policy() : policy_asked(request.body);
  LivePolicy::Change change;
  try {
    change = live->switch_to(name);
  } catch (const std::invalid_argument& e) {
    throw ApiError(400, e.what(), "invalid_request_error", "invalid_value", "policy");
  }
  return json_response(
      200, {{"from", change.from}, {"to", change.to}, {"gate_closed_ms", change.gate_closed_ms}});
}

std::string Router::reloaded_policy() const {
  if (!context_.reread)
    throw ApiError(409, "this server cannot reload its configuration", "invalid_request_error");
  ServeConfig config;
  try {
    config = context_.reread();
  } catch (const std::invalid_argument& e) {  // ConfigError: the file's mistake, named
    throw ApiError(400, std::string("the configuration does not load: ") + e.what(),
                   "invalid_request_error", "invalid_config");
  }
  // Only the turn changes live; the rest needs a restart.
  return describe(config.turn);
}

}  // namespace baton
