// The routes that describe the server rather than run a model: /v1/models (and each
// model's load and unload), /health, /metrics and /v1/engines (Router's members, apart
// from the request paths).
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "baton/common/json_or_null.h"
#include "baton/ledger/write_status_json.h"
#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"
#include "baton/server/routes/router.h"

namespace baton {
namespace {

using nlohmann::json;

std::int64_t unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

const EngineHealthState* state_of(const std::vector<EngineHealthState>& states,
                                  const std::string& engine) {
  for (const EngineHealthState& s : states) {
    if (s.engine == engine) return &s;
  }
  return nullptr;
}

json fault_json(const FaultEvent& event) {
  return {{"kind", to_string(event.kind)},
          {"time", unix_seconds(event.wall_time)},
          {"fatal", event.fatal},
          {"detail", event.detail}};
}

json turn_json(const TurnStats& turn, const std::string& engine) {
  for (const ClientTurnStats& c : turn.clients) {
    if (c.name != engine) continue;
    return {{"acquisitions", c.acquisitions},
            {"waits", c.handovers_in},
            {"yields", c.yields},
            {"wait_s", c.wait_s},
            {"hold_s", c.hold_s},
            {"weight", c.weight},
            {"wanted_s", c.wanted_s()},
            {"device_s", c.device_s}};
  }
  return nullptr;
}

// When the model's files were written (its config.json's modification time), as the
// API's `created`; 0 when the file cannot be read.
std::int64_t created_at(const ModelSpec& spec) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(spec.dir / "config.json", ec);
  if (ec) return 0;
  return unix_seconds(std::chrono::file_clock::to_sys(written));
}

json model_json(const ModelStatus& s) {
  const ModelSpec& spec = s.spec;
  json j = {{"id", spec.name},
            {"object", "model"},
            {"created", created_at(spec)},
            {"owned_by", "baton"},
            {"kind", kind_name(spec.kind)},
            {"max_model_len", s.context_length},
            {"state", to_string(s.state)},
            {"load", spec.on_demand ? "on-demand" : "startup"},
            {"pinned", spec.pin},
            {"memory_bytes", s.memory_bytes},
            {"host_memory_bytes", s.host_memory_bytes},
            {"device_memory_bytes", s.device_memory_bytes},
            {"idle_ttl_s", spec.idle_ttl_s > 0 ? json(spec.idle_ttl_s) : json(nullptr)},
            {"expires_at", json_or_null(s.expires_at)},
            {"last_used", json_or_null(s.last_used)}};
  if (s.state == ModelState::loading) {
    j["progress"] = {{"done_bytes", s.progress_done}, {"total_bytes", s.progress_total}};
  }
  if (s.state == ModelState::failed) j["reason"] = s.reason;
  return j;
}

std::map<std::string, ModelRegistry::Lease> ready_by_name(const ModelRegistry& registry) {
  std::map<std::string, ModelRegistry::Lease> ready;
  for (ModelRegistry::Lease& lease : registry.ready()) ready[lease->spec.name] = std::move(lease);
  return ready;
}

}  // namespace

HttpResponse Router::models() const {
  json data = json::array();
  for (const ModelStatus& status : context_.models.statuses()) data.push_back(model_json(status));
  const std::uint64_t budget = context_.models.budget_bytes();
  const json memory = {{"budget_bytes", budget > 0 ? json(budget) : json(nullptr)},
                       {"used_bytes", context_.models.used_bytes()}};
  return json_response(200, {{"object", "list"}, {"data", data}, {"memory", memory}});
}

std::optional<HttpResponse> Router::model_route(const HttpRequest& request) {
  const std::string prefix = "/v1/models/";
  if (request.target.rfind(prefix, 0) != 0) return std::nullopt;
  std::string name = request.target.substr(prefix.size());
  std::string action;
  if (const std::size_t slash = name.find('/'); slash != std::string::npos) {
    action = name.substr(slash + 1);
    name.resize(slash);
  }
  const bool get = request.method == "GET", post = request.method == "POST";
  if (action.empty() && get) return json_response(200, model_json(context_.models.status(name)));
  if (action == "load" && post) {
    const ModelStatus status = context_.models.load(name);
    if (status.state == ModelState::failed) {  // refused at once: it cannot fit
      throw ApiError(503, "The model '" + name + "' cannot load: " + status.reason, "server_error",
                     "model_load_failed", "model");
    }
    return json_response(status.state == ModelState::ready ? 200 : 202, model_json(status));
  }
  if (action == "unload" && post) {
    const ModelStatus status = context_.models.unload(name);
    return json_response(status.state == ModelState::unloaded ? 200 : 202, model_json(status));
  }
  const bool known = action.empty() || action == "load" || action == "unload";
  throw ApiError(known ? 405 : 404,
                 (known ? "Method " + request.method + " is not allowed on "
                        : "Unknown route " + request.method + " ") +
                     request.target,
                 "invalid_request_error", known ? "method_not_allowed" : "not_found");
}

HttpResponse Router::health() const {
  const std::vector<EngineHealthState> states = context_.health.states();
  json models = json::array();
  std::string reason;
  for (const ModelStatus& status : context_.models.statuses()) {
    const std::string& name = status.spec.name;
    const EngineHealthState* s = state_of(states, name);
    const std::string state = s != nullptr ? s->state : "ok";
    json entry = {{"name", name},
                  {"kind", kind_name(status.spec.kind)},
                  {"state", state},
                  {"model_state", to_string(status.state)}};
    if (s != nullptr && !s->reason.empty()) {
      entry["reason"] = s->reason;
      if (reason.empty()) reason = name + " is " + state + ": " + s->reason;
    }
    models.push_back(std::move(entry));
  }
  const bool ok = reason.empty();
  json body = {{"status", ok ? "ok" : "unavailable"}, {"models", std::move(models)}};
  if (!ok) body["reason"] = reason;
  if (context_.ledger != nullptr) {
    // A ledger that cannot write is a warning, not a reason to stop sending requests here.
    const LedgerWriteStatus ledger = context_.ledger->write_status();
    body["ledger"] = to_json(ledger);
    if (ok && (ledger.failing() || ledger.incomplete())) {
      body["status"] = "degraded";
      body["reason"] = "the ledger cannot write: " + ledger.last_error;
    }
  }
  HttpResponse response = json_response(ok ? 200 : 503, body);
  if (!ok) response.head.headers.emplace_back("Retry-After", "1");
  return response;
}

HttpResponse Router::metrics() const {
  HostGauges host;
  const std::vector<EngineHealthState> states = context_.health.states();
  for (const ModelRegistry::Lease& model : context_.models.ready()) {
    EngineGauge gauge{
        .engine = model->spec.name, .kind = std::string(model->kind_name()), .state = "ok"};
    if (const EngineHealthState* s = state_of(states, model->spec.name)) gauge.state = s->state;
    if (model->llm != nullptr) {
      const LlmEngineStats stats = model->llm->stats();
      gauge.waiting = stats.queued;
      gauge.running = stats.running;
      gauge.kv_blocks_total = stats.kv_blocks_total;
      gauge.kv_blocks_used = stats.kv_blocks_total - stats.kv_blocks_available;
    }
    host.engines.push_back(std::move(gauge));
  }
  for (const ModelStatus& status : context_.models.statuses()) {
    host.models.push_back({.model = status.spec.name,
                           .state = std::string(to_string(status.state)),
                           .memory_bytes = status.memory_bytes,
                           .kv_budget_bytes = status.kv_budget_bytes,
                           .kv_source = status.kv_source,
                           .host_memory_bytes = status.host_memory_bytes,
                           .device_memory_bytes = status.device_memory_bytes});
  }
  host.memory_budget_bytes = context_.models.budget_bytes();
  host.turn = context_.host.turn().stats();
  const OverlapReading overlap = context_.host.overlap();
  host.overlap_s = overlap.overlap_s;
  host.overlap_episodes = overlap.episodes;
  host.dual_engine_s = context_.busy.dual_seconds();
  for (const FaultEvent& event : context_.host.faults().events()) {
    ++host.faults[{std::string(to_string(event.kind)), event.engine}];
  }
  if (context_.http_stats) host.connections = context_.http_stats().connections;
  if (context_.ledger != nullptr) host.ledger = context_.ledger->write_status();
  if (context_.experiment) host.experiment = context_.experiment();
  std::string text = context_.metrics.render(host);
  if (context_.exposure != nullptr) context_.exposure->render(text, Clock::now());
  return {.head = {.status = 200,
                   .content_type = "text/plain; version=0.0.4; charset=utf-8",
                   .headers = {}},
          .body = std::move(text)};
}

HttpResponse Router::engines() const {
  const std::vector<EngineHealthState> states = context_.health.states();
  const TurnStats turn = context_.host.turn().stats();
  json engines = json::array();
  const std::map<std::string, ModelRegistry::Lease> ready = ready_by_name(context_.models);
  for (const ModelStatus& status : context_.models.statuses()) {
    const std::string& name = status.spec.name;
    json entry = {{"name", name},
                  {"kind", kind_name(status.spec.kind)},
                  {"model_state", to_string(status.state)},
                  {"turn", turn_json(turn, name)}};
    auto it = ready.find(name);
    const ServedModel* model = it == ready.end() ? nullptr : it->second.get();
    if (const EngineHealthState* s = state_of(states, name)) {
      entry["state"] = s->state;
      entry["reason"] = s->reason;
      entry["faults"] = s->faults;
      json last = json::array();
      for (const FaultEvent& event : s->last_faults) last.push_back(fault_json(event));
      entry["last_faults"] = std::move(last);
    }
    // Cumulative over every load of the model (the dashboard's tokens/s are their deltas).
    const EngineTotals& totals = status.totals;
    entry["requests_done"] = totals.requests_done;
    entry["requests_failed"] = totals.requests_failed;
    if (status.spec.kind == ModelSpec::Kind::chat) {
      entry["generated_tokens"] = totals.generated_tokens;
      entry["prompt_tokens"] = totals.prompt_tokens;
      entry["cached_prompt_tokens"] = totals.cached_prompt_tokens;
    } else {
      entry["inputs"] = totals.inputs;
    }
    if (model != nullptr && model->llm != nullptr) {
      const LlmEngineStats stats = model->llm->stats();
      entry["queue"] = stats.queued;
      entry["running"] = stats.running;
      entry["kv_blocks"] = {{"total", stats.kv_blocks_total},
                            {"available", stats.kv_blocks_available},
                            {"cached", stats.kv_blocks_cached}};
      entry["context_length"] = model->llm->context_length();
    } else if (model != nullptr && model->embedding != nullptr) {
      entry["dimensions"] = model->embedding->dimensions();
    }
    engines.push_back(std::move(entry));
  }
  const json body = {
      {"policy", context_.live_policy ? context_.live_policy->current() : context_.policy},
      {"backend", context_.host.device().backend()},
      {"engines", std::move(engines)}};
  return json_response(200, body);
}

}  // namespace baton
