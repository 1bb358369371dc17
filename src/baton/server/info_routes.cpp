// The routes that describe the server rather than run a model: /v1/models, /health,
// /metrics and /v1/engines (Router's members, apart from the request paths).
#include <chrono>
#include <nlohmann/json.hpp>

#include "baton/server/openai_response.h"
#include "baton/server/router.h"

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
    return {{"acquisitions", c.acquisitions}, {"waits", c.handovers_in}, {"yields", c.yields},
            {"wait_s", c.wait_s},             {"hold_s", c.hold_s}};
  }
  return nullptr;
}

}  // namespace

HttpResponse Router::models() const {
  json data = json::array();
  for (const ServedModel* model : context_.models) {
    data.push_back({{"id", model->spec.name},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "baton"},
                    {"kind", model->kind_name()},
                    {"max_model_len", model->llm != nullptr ? model->llm->context_length() : 0}});
  }
  return {{200, "application/json", {}}, dump(json{{"object", "list"}, {"data", data}})};
}

HttpResponse Router::health() const {
  const std::vector<EngineHealthState> states = context_.health.states();
  json models = json::array();
  std::string reason;
  for (const ServedModel* model : context_.models) {
    const EngineHealthState* s = state_of(states, model->spec.name);
    const std::string state = s != nullptr ? s->state : "ok";
    json entry = {{"name", model->spec.name}, {"kind", model->kind_name()}, {"state", state}};
    if (s != nullptr && !s->reason.empty()) {
      entry["reason"] = s->reason;
      if (reason.empty()) reason = model->spec.name + " is " + state + ": " + s->reason;
    }
    models.push_back(std::move(entry));
  }
  const bool ok = reason.empty();
  json body = {{"status", ok ? "ok" : "unavailable"}, {"models", std::move(models)}};
  if (!ok) body["reason"] = reason;
  HttpResponse response{{ok ? 200 : 503, "application/json", {}}, dump(body)};
  if (!ok) response.head.headers.emplace_back("Retry-After", "1");
  return response;
}

HttpResponse Router::metrics() const {
  HostGauges host;
  const std::vector<EngineHealthState> states = context_.health.states();
  for (const ServedModel* model : context_.models) {
    EngineGauge gauge{model->spec.name, std::string(model->kind_name()), "ok"};
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
  host.turn = context_.host.turn().stats();
  const OverlapReading overlap = context_.host.device().overlap().read();
  host.overlap_s = overlap.overlap_s;
  host.overlap_episodes = overlap.episodes;
  host.dual_engine_s = context_.busy.dual_seconds();
  for (const FaultEvent& event : context_.host.faults().events()) {
    ++host.faults[{std::string(to_string(event.kind)), event.engine}];
  }
  if (context_.http_stats) host.connections = context_.http_stats().connections;
  return {{200, "text/plain; version=0.0.4; charset=utf-8", {}}, context_.metrics.render(host)};
}

HttpResponse Router::engines() const {
  const std::vector<EngineHealthState> states = context_.health.states();
  const TurnStats turn = context_.host.turn().stats();
  json engines = json::array();
  for (const ServedModel* model : context_.models) {
    const std::string& name = model->spec.name;
    json entry = {{"name", name}, {"kind", model->kind_name()}, {"turn", turn_json(turn, name)}};
    if (const EngineHealthState* s = state_of(states, name)) {
      entry["state"] = s->state;
      entry["reason"] = s->reason;
      entry["faults"] = s->faults;
      json last = json::array();
      for (const FaultEvent& event : s->last_faults) last.push_back(fault_json(event));
      entry["last_faults"] = std::move(last);
    }
    if (model->llm != nullptr) {
      const LlmEngineStats stats = model->llm->stats();
      entry["queue"] = stats.queued;
      entry["running"] = stats.running;
      entry["requests_done"] = stats.requests_done;
      entry["requests_failed"] = stats.requests_failed;
      entry["kv_blocks"] = {{"total", stats.kv_blocks_total},
                            {"available", stats.kv_blocks_available},
                            {"cached", stats.kv_blocks_cached}};
      entry["context_length"] = model->llm->context_length();
    } else if (model->embedding != nullptr) {
      const EmbeddingEngineStats stats = model->embedding->stats();
      entry["requests_done"] = stats.requests_done;
      entry["requests_failed"] = stats.requests_failed;
      entry["inputs"] = stats.inputs;
      entry["dimensions"] = model->embedding->dimensions();
    }
    engines.push_back(std::move(entry));
  }
  const json body = {{"policy", context_.policy},
                     {"backend", context_.host.device().backend()},
                     {"engines", std::move(engines)}};
  return {{200, "application/json", {}}, dump(body)};
}

}  // namespace baton
