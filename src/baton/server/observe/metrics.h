// ServerMetrics: what `GET /metrics` reports, in the Prometheus text format. Names follow
// vLLM's where the concept is the same (baton_ for vllm:): requests by model and status,
// prompt and generation tokens, time to first token, inter-token latency and end-to-end
// latency histograms, requests running and waiting, KV cache usage; then baton's own:
// turn waits and hand-overs, overlap seconds, dual-engine seconds, faults by kind and
// engine, each engine's state, each model's lifecycle state and memory, the ledger's writes.
// Thread-safety: every member is thread-safe (one mutex); the models are fixed at
// construction.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/ledger/ledger.h"
#include "baton/turn/turn_metrics.h"

namespace baton {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // `name`'s _bucket, _sum and _count lines, with `labels` (`model_name="x"`).
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // one per bound, then +Inf
  double sum_ = 0.0;
  std::uint64_t count_ = 0;
};

// What the host reports at the moment of a scrape.
struct EngineGauge {
  std::string engine;
  std::string kind;  // chat or embedding
  std::string state;  // ok, recovering, fatal (engine_health.h)
  std::size_t waiting = 0;
  std::size_t running = 0;
  int kv_blocks_used = 0;
  int kv_blocks_total = 0;
};

// A configured model's lifecycle (model_registry.h).
struct ModelGauge {
  std::string model;
  std::string state;  // unloaded, loading, ready, unloading, failed
  std::uint64_t memory_bytes = 0;
  std::uint64_t kv_budget_bytes = 0;  // a loaded chat model's KV cache, else 0
  std::string kv_source;              // given, default or auto (kv_sizing.h)
  std::uint64_t host_memory_bytes = 0;    // a loaded model's, in host memory
  std::uint64_t device_memory_bytes = 0;  // and in device memory
};

struct HostGauges {
  std::vector<EngineGauge> engines;
  std::vector<ModelGauge> models;
  std::uint64_t memory_budget_bytes = 0;  // 0: none
  TurnStats turn;
  double overlap_s = 0.0;
  std::uint64_t overlap_episodes = 0;
  double dual_engine_s = 0.0;
  std::map<std::pair<std::string, std::string>, std::uint64_t> faults;  // (kind, engine)
  std::size_t connections = 0;
  std::optional<LedgerWriteStatus> ledger;  // none: the server keeps no ledger
  std::optional<nlohmann::json> experiment;  // /v1/experiment's state; none: no experiment
};

class ServerMetrics {
 public:
  explicit ServerMetrics(const std::vector<std::string>& models);

  // Every HTTP request, by route and status; `model` empty where none applies, and
  // counted as empty when it is not one of the models (the series stay bounded).
  void http_request(const std::string& model, std::string_view route, int status);
  void prompt_tokens(const std::string& model, int tokens);
  void first_token(const std::string& model, double seconds);
  void inter_token(const std::string& model, double seconds);
  // A completion that ended: `reason` stop, length, error or cancelled.
  void finished(const std::string& model, std::string_view reason, int generated_tokens,
                double e2e_seconds);

  std::string render(const HostGauges& host) const;

 private:
  struct PerModel {
    std::uint64_t prompt_tokens = 0;
    std::uint64_t generation_tokens = 0;
    std::map<std::string, std::uint64_t> finished;  // by reason
    Histogram ttft, itl, e2e;
    PerModel();
  };

  void render_models(std::string& out) const;

  mutable std::mutex mu_;
  std::map<std::string, PerModel> models_;  // guarded by mu_; keys fixed
  // (model, route, status) -> count; guarded by mu_
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> http_;
};

// `value` as a Prometheus label value: backslash, quote and newline escaped.
std::string label_value(std::string_view value);

}  // namespace baton
