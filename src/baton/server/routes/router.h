// Router: the HTTP API of `baton serve`, from a parsed request to a response: the OpenAI
// routes (chat completions, completions, embeddings, models) and baton's own (health,
// metrics, engines, loading and unloading models). It authenticates /v1/ routes when an
// API key is set (compared in constant time), gets the model from the registry (404 lists
// the models; an on-demand model loads first), turns the request into an engine request,
// and hands back a PendingResponse the engine fills.
// Thread-safety: handle() may run on every I/O thread at once; the rest is set-up.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baton/host/engine_host.h"
#include "baton/ledger/ledger.h"
#include "baton/server/api/openai_request.h"
#include "baton/server/http/http_server.h"
#include "baton/server/http/http_types.h"
#include "baton/server/live/live_policy.h"
#include "baton/server/models/after_load.h"
#include "baton/server/models/model_registry.h"
#include "baton/server/models/served_model.h"
#include "baton/server/observe/dual_engine_clock.h"
#include "baton/server/observe/engine_health.h"
#include "baton/server/observe/exposure_counters.h"
#include "baton/server/observe/metrics.h"
#include "baton/server/observe/recent_activity.h"

namespace baton {

struct RouterContext {
  ModelRegistry& models;
  EngineHost& host;
  EngineHealth& health;
  ServerMetrics& metrics;
  DualEngineClock& busy;
  std::string api_key;                          // empty: no authentication
  std::string policy;                           // the turn policy, described (turn_options.h)
  std::function<HttpServerStats()> http_stats;  // set before serving
  const RecentActivity* activity = nullptr;     // the timeline's; none: empty lanes
  ExposureCounters* exposure = nullptr;         // /metrics' fleet counters; none: left out
  const Ledger* ledger = nullptr;  // its write status in /health and /metrics; none: no ledger
  LivePolicy* live_policy = nullptr;  // the turn's policy can change while serving; none: fixed
  // A live experiment's state (/v1/experiment); none: no experiment runs.
  std::function<std::optional<nlohmann::json>()> experiment;
  // The configuration read again (POST /v1/admin/reload); none: the server cannot reload.
  std::function<ServeConfig()> reread;
};

// The format `model` writes tool calls in, when the request's output may hold calls (its
// text is then read for them); none otherwise.
std::optional<ToolCallFormat> tool_call_format(const CompletionCall& call,
                                               const ServedModel& model);

class Router {
 public:
  explicit Router(RouterContext context);
  RouteResult handle(const HttpRequest& request);
  // HTTP status and reason of GET /health right now (for logs and tests).
  HttpResponse health() const;

 private:
  // A route's work once it holds the model: `model` stays loaded while the result lives.
  using ModelRoute = std::function<RouteResult(std::shared_ptr<const ServedModel> model)>;
  // Runs `then` on the model `name` of the route's kind (chat or embedding): at once when
  // it is ready, or once an on-demand load finishes (the response waits, bounded; an
  // error that ends the wait is shaped by `error_response`, the OpenAI shape when empty).
  // Throws ApiError: 404 for an unknown model or one of the other kind, 503 for one that
  // failed or is not loaded.
  // `route` names the route in the metrics of an error that ends a wait.
  RouteResult with_model(const std::string& route, const std::string& name, bool chat,
                         ModelRoute then, AfterLoad::ErrorResponse error_response = {});
  // GET /v1/models/{id}, POST /v1/models/{id}/load and /unload; nullopt for another path.
  std::optional<HttpResponse> model_route(const HttpRequest& request);
  RouteResult completion(const HttpRequest& request, CompletionCall::Kind kind);
  RouteResult embeddings(const HttpRequest& request);
  // peer_routes.cpp: Anthropic's /v1/messages (errors in its shape), OpenAI's /v1/responses,
  // vLLM's /tokenize and /detokenize (a model of either kind: with_any_model).
  RouteResult messages(const HttpRequest& request);
  RouteResult responses(const HttpRequest& request);
  RouteResult tokenize(const HttpRequest& request);
  RouteResult detokenize(const HttpRequest& request);
  RouteResult with_any_model(const std::string& route, const std::string& name,
                             const ModelRoute& then);
  // policy_routes.cpp: GET and POST /v1/admin/policy, POST /v1/admin/reload, GET
  // /v1/experiment; nullopt for another path.
  std::optional<HttpResponse> policy_route(const HttpRequest& request);
  // POST /v1/admin/reload: the arm the configuration read again names. Throws ApiError.
  std::string reloaded_policy() const;
  HttpResponse models() const;
  HttpResponse metrics() const;
  HttpResponse engines() const;
  bool authorized(const HttpRequest& request) const;
  GenerationRequest generation_request(const CompletionCall& call, const ServedModel& model);
  std::string next_unique();
  // Counts a request in /metrics under its route's template (route_label.h) and `model`
  // (kept only when configured: ServerMetrics drops other names).
  void count(const std::string& model, const std::string& route, int status) const;
  // The model a request names (its path's id or its body's "model"), for counting a
  // request that ended before its route knew the model; empty when it names none.
  std::string model_of(const HttpRequest& request) const;

  RouterContext context_;
  const std::string id_prefix_;
  std::atomic<std::uint64_t> serial_{0};
};

// Equal, in time that depends only on the lengths (an API key check leaks nothing else).
bool constant_time_equal(std::string_view a, std::string_view b);

// The credentials of an `Authorization: Bearer TOKEN` header; the scheme's name is
// case-insensitive (RFC 9110, 11.1). nullopt for another scheme.
std::optional<std::string_view> bearer_token(std::string_view header);

// A whole JSON answer with this status (baton's own routes; invalid UTF-8 replaced).
HttpResponse json_response(int status, const nlohmann::json& body);

}  // namespace baton
