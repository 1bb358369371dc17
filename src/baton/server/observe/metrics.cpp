#include "baton/server/observe/metrics.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace baton {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " " + number(value) + "\n";
}

std::string model_label(const std::string& model) {
  return "model_name=\"" + label_value(model) + "\"";
}

// vLLM's buckets for time to first token and inter-token latency, in seconds.
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08,
                                          0.1,   0.25,  0.5,  0.75, 1.0,  2.5,  5.0,
                                          7.5,   10.0,  20.0, 40.0, 80.0};
const std::vector<double> kItlBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                                         0.4,  0.5,   0.75, 1.0,   2.5, 5.0,  7.5, 10.0};
const std::vector<double> kE2eBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,  2.5,  5.0,
                                         10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0};

void render_engines(std::string& out, const HostGauges& host) {
  header(out, "baton_num_requests_running", "gauge", "Requests in the engine's running batch.");
  for (const EngineGauge& e : host.engines) {
    sample(out, "baton_num_requests_running", model_label(e.engine),
           static_cast<double>(e.running));
  }
  header(out, "baton_num_requests_waiting", "gauge", "Requests queued, not yet running.");
  for (const EngineGauge& e : host.engines) {
    sample(out, "baton_num_requests_waiting", model_label(e.engine),
           static_cast<double>(e.waiting));
  }
  const std::pair<const char*, const char*> kv[] = {
      {"baton_kv_cache_usage_perc", "Share of KV cache blocks in use (0-1)."},
      {"baton_kv_blocks_used", "KV cache blocks in use."},
      {"baton_kv_blocks_total", "KV cache blocks in the budget."}};
  for (int i = 0; i < 3; ++i) {
    header(out, kv[i].first, "gauge", kv[i].second);
    for (const EngineGauge& e : host.engines) {
      if (e.kv_blocks_total == 0) continue;
      const double used = e.kv_blocks_used;
      const double values[] = {used / e.kv_blocks_total, used,
                               static_cast<double>(e.kv_blocks_total)};
      sample(out, kv[i].first, model_label(e.engine), values[i]);
    }
  }
  header(out, "baton_engine_state", "gauge",
         "1 for the engine's health state (ok, recovering, fatal).");
  for (const EngineGauge& e : host.engines) {
    for (const char* state : {"ok", "recovering", "fatal"}) {
      sample(out, "baton_engine_state", model_label(e.engine) + ",state=\"" + state + "\"",
             e.state == state ? 1 : 0);
    }
  }
}

void render_lifecycle(std::string& out, const HostGauges& host) {
  header(out, "baton_model_state", "gauge",
         "1 for the model's lifecycle state (unloaded, loading, ready, unloading, failed).");
  for (const ModelGauge& m : host.models) {
    for (const char* state : {"unloaded", "loading", "ready", "unloading", "failed"}) {
      sample(out, "baton_model_state", model_label(m.model) + ",state=\"" + state + "\"",
             m.state == state ? 1 : 0);
    }
  }
  header(out, "baton_model_memory_bytes", "gauge",
         "Weights and KV budget the model holds (counted against the memory budget).");
  for (const ModelGauge& m : host.models) {
    sample(out, "baton_model_memory_bytes", model_label(m.model),
           static_cast<double>(m.memory_bytes));
  }
  header(out, "baton_model_host_memory_bytes", "gauge",
         "A loaded model's weights (and on the CPU its KV cache) in host memory.");
  for (const ModelGauge& m : host.models) {
    sample(out, "baton_model_host_memory_bytes", model_label(m.model),
           static_cast<double>(m.host_memory_bytes));
  }
  header(out, "baton_model_device_memory_bytes", "gauge",
         "A loaded model's weights and KV cache in device (GPU) memory; 0 on the CPU.");
  for (const ModelGauge& m : host.models) {
    sample(out, "baton_model_device_memory_bytes", model_label(m.model),
           static_cast<double>(m.device_memory_bytes));
  }
  header(out, "baton_model_kv_budget_bytes", "gauge",
         "A loaded chat model's KV cache, and where its size came from (given, default, auto: "
         "sized from the device's free memory).");
  for (const ModelGauge& m : host.models) {
    if (m.kv_budget_bytes == 0) continue;
    sample(out, "baton_model_kv_budget_bytes",
           model_label(m.model) + ",source=\"" + label_value(m.kv_source) + "\"",
           static_cast<double>(m.kv_budget_bytes));
  }
  if (host.memory_budget_bytes > 0) {
    header(out, "baton_memory_budget_bytes", "gauge", "The host-wide memory budget of models.");
    sample(out, "baton_memory_budget_bytes", "", static_cast<double>(host.memory_budget_bytes));
  }
}

void render_turn(std::string& out, const HostGauges& host) {
  struct Family {
    const char* name;
    const char* help;
    double (*value)(const ClientTurnStats&);
    const char* type = "counter";
  };
  const Family families[] = {
      {.name = "baton_turn_acquisitions_total",
       .help = "GPU turn acquisitions by engine.",
       .value = [](const ClientTurnStats& c) { return static_cast<double>(c.acquisitions); }},
      {.name = "baton_turn_waits_total",
       .help = "Acquisitions that waited for another holder.",
       .value = [](const ClientTurnStats& c) { return static_cast<double>(c.handovers_in); }},
      {.name = "baton_turn_wait_seconds_total",
       .help = "Time engines waited for the turn.",
       .value = [](const ClientTurnStats& c) { return c.wait_s; }},
      {.name = "baton_turn_hold_seconds_total",
       .help = "Time engines held the turn.",
       .value = [](const ClientTurnStats& c) { return c.hold_s; }},
      {.name = "baton_turn_wanted_seconds_total",
       .help = "Time engines wanted the GPU: waiting for the turn or holding it.",
       .value = [](const ClientTurnStats& c) { return c.wanted_s(); }},
      {.name = "baton_turn_device_seconds_total",
       .help = "Device time engines' holds used (serialize): what the weights share out.",
       .value = [](const ClientTurnStats& c) { return c.device_s; }},
      {.name = "baton_turn_weight",
       .help = "Engines' turn weights: their shares of the GPU beside the others that want it.",
       .value = [](const ClientTurnStats& c) { return c.weight; },
       .type = "gauge"}};
  for (const Family& family : families) {
    header(out, family.name, family.type, family.help);
    for (const ClientTurnStats& c : host.turn.clients) {
      sample(out, family.name, "engine=\"" + label_value(c.name) + "\"", family.value(c));
    }
  }
  header(out, "baton_turn_handovers_total", "counter", "Hand-overs of the GPU turn.");
  sample(out, "baton_turn_handovers_total", "", static_cast<double>(host.turn.handovers));
  header(out, "baton_overlap_seconds_total", "counter",
         "Time two or more GPU streams had work in flight at once.");
  sample(out, "baton_overlap_seconds_total", "", host.overlap_s);
  header(out, "baton_overlap_episodes_total", "counter", "Times stream overlap began.");
  sample(out, "baton_overlap_episodes_total", "", static_cast<double>(host.overlap_episodes));
  header(out, "baton_dual_engine_seconds_total", "counter",
         "Time two or more engines had requests in progress at once.");
  sample(out, "baton_dual_engine_seconds_total", "", host.dual_engine_s);
  header(out, "baton_faults_total", "counter", "Detected faults by kind and blamed engine.");
  for (const auto& [key, count] : host.faults) {
    sample(out, "baton_faults_total",
           "kind=\"" + label_value(key.first) + "\",engine=\"" + label_value(key.second) + "\"",
           static_cast<double>(count));
  }
  header(out, "baton_http_connections", "gauge", "Open HTTP connections.");
  sample(out, "baton_http_connections", "", static_cast<double>(host.connections));
}

// The ledger writer's counts: a failed write shows here at once, its rows held or lost.
void render_ledger(std::string& out, const LedgerWriteStatus& ledger) {
  const struct {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t value;
  } families[] = {
      {.name = "baton_ledger_rows_written_total",
       .type = "counter",
       .help = "Rows the ledger committed.",
       .value = ledger.rows_written},
      {.name = "baton_ledger_rows_held",
       .type = "gauge",
       .help = "Rows of failed ledger writes, held to be tried again.",
       .value = ledger.rows_held},
      {.name = "baton_ledger_rows_lost_total",
       .type = "counter",
       .help = "Rows the ledger could not write and gave up.",
       .value = ledger.rows_lost},
      {.name = "baton_ledger_write_failures_total",
       .type = "counter",
       .help = "Ledger writes (commits) that failed.",
       .value = ledger.failed_commits},
  };
  for (const auto& family : families) {
    header(out, family.name, family.type, family.help);
    sample(out, family.name, "", static_cast<double>(family.value));
  }
}

}  // namespace

std::string label_value(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[static_cast<std::size_t>(at)];
  sum_ += value;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    sample(out, name + "_bucket", labels + ",le=\"" + le + "\"", static_cast<double>(cumulative));
  }
  sample(out, name + "_sum", labels, sum_);
  sample(out, name + "_count", labels, static_cast<double>(count_));
}

ServerMetrics::PerModel::PerModel() : ttft(kTtftBuckets), itl(kItlBuckets), e2e(kE2eBuckets) {}

ServerMetrics::ServerMetrics(const std::vector<std::string>& models) {
  for (const std::string& model : models) models_.try_emplace(model);
}

void ServerMetrics::http_request(const std::string& model, std::string_view route, int status) {
  std::lock_guard lock(mu_);
  // A name no model has would add a series per name a client makes up.
  const std::string& label = models_.contains(model) ? model : std::string();
  ++http_[{label, std::string(route), status}];
}

void ServerMetrics::prompt_tokens(const std::string& model, int tokens) {
  std::lock_guard lock(mu_);
  if (auto it = models_.find(model); it != models_.end()) {
    it->second.prompt_tokens += static_cast<std::uint64_t>(tokens);
  }
}

void ServerMetrics::first_token(const std::string& model, double seconds) {
  std::lock_guard lock(mu_);
  if (auto it = models_.find(model); it != models_.end()) it->second.ttft.observe(seconds);
}

void ServerMetrics::inter_token(const std::string& model, double seconds) {
  std::lock_guard lock(mu_);
  if (auto it = models_.find(model); it != models_.end()) it->second.itl.observe(seconds);
}

void ServerMetrics::finished(const std::string& model, std::string_view reason,
                             int generated_tokens, double e2e_seconds) {
  std::lock_guard lock(mu_);
  auto it = models_.find(model);
  if (it == models_.end()) return;
  ++it->second.finished[std::string(reason)];
  it->second.generation_tokens += static_cast<std::uint64_t>(generated_tokens);
  it->second.e2e.observe(e2e_seconds);
}

void ServerMetrics::render_models(std::string& out) const {
  header(out, "baton_http_requests_total", "counter", "HTTP requests by model, route and status.");
  for (const auto& [key, count] : http_) {
    const auto& [model, route, status] = key;
    sample(out, "baton_http_requests_total",
           model_label(model) + ",route=\"" + label_value(route) + "\",status=\"" +
               std::to_string(status) + "\"",
           static_cast<double>(count));
  }
  header(out, "baton_prompt_tokens_total", "counter", "Prompt tokens of completions.");
  for (const auto& [model, m] : models_) {
    sample(out, "baton_prompt_tokens_total", model_label(model),
           static_cast<double>(m.prompt_tokens));
  }
  header(out, "baton_generation_tokens_total", "counter", "Generated tokens.");
  for (const auto& [model, m] : models_) {
    sample(out, "baton_generation_tokens_total", model_label(model),
           static_cast<double>(m.generation_tokens));
  }
  header(out, "baton_request_success_total", "counter",
         "Completions that ended, by finished_reason (stop, length, error, cancelled).");
  for (const auto& [model, m] : models_) {
    for (const auto& [reason, count] : m.finished) {
      sample(out, "baton_request_success_total",
             model_label(model) + ",finished_reason=\"" + label_value(reason) + "\"",
             static_cast<double>(count));
    }
  }
  const std::pair<const char*, Histogram PerModel::*> histograms[] = {
      {"baton_time_to_first_token_seconds", &PerModel::ttft},
      {"baton_inter_token_latency_seconds", &PerModel::itl},
      {"baton_e2e_request_latency_seconds", &PerModel::e2e}};
  for (const auto& [name, member] : histograms) {
    header(out, name, "histogram", "Seconds, by model.");
    for (const auto& [model, m] : models_) (m.*member).render(out, name, model_label(model));
  }
}

namespace {

// A live experiment (issue 51): per arm the exposure, hangs and clusters its ended blocks
// gave the test, the arm running, and the test's always-valid p-value and rate-ratio bounds.
void render_experiment(std::string& out, const nlohmann::json& state) {
  const std::string plan = "plan=\"" + label_value(state.value("plan", "")) + "\"";
  const std::string running = state["arm"].is_string() ? state["arm"].get<std::string>() : "";
  struct PerArm {
    const char* name;
    const char* key;
    const char* help;
  };
  for (const PerArm& family :
       {PerArm{"baton_experiment_hours", "hours", "Exposure hours of the arm's ended blocks"},
        PerArm{"baton_experiment_hangs", "hangs", "Hangs in the arm's ended blocks"},
        PerArm{"baton_experiment_clusters", "clusters", "Hang clusters the test counted"}}) {
    header(out, family.name, "gauge", family.help);
    for (const nlohmann::json& arm : state["arms"]) {
      sample(out, family.name, plan + ",arm=\"" + label_value(arm.value("name", "")) + "\"",
             arm.value(family.key, 0.0));
    }
  }
  header(out, "baton_experiment_arm_running", "gauge", "1 for the arm the turn is on");
  for (const nlohmann::json& arm : state["arms"]) {
    const std::string name = arm.value("name", "");
    sample(out, "baton_experiment_arm_running", plan + ",arm=\"" + label_value(name) + "\"",
           name == running ? 1.0 : 0.0);
  }
  for (const auto& [name, key, help] :
       {std::tuple{"baton_experiment_p_value", "p_value", "The always-valid p-value so far"},
        std::tuple{"baton_experiment_ratio_low", "ratio_low",
                   "Lower bound of the rate ratio (arm 2 / arm 1), valid at any time"},
        std::tuple{"baton_experiment_ratio_high", "ratio_high", "Upper bound (absent: unbounded)"},
        std::tuple{"baton_experiment_hours_still_needed", "hours_still_needed",
                   "Hours until a verdict at the design's cut (absent: no rate yet)"}}) {
    if (!state[key].is_number()) continue;
    header(out, name, "gauge", help);
    sample(out, name, plan, state[key].get<double>());
  }
  header(out, "baton_experiment_ended", "gauge", "1 once the experiment has ended");
  sample(out, "baton_experiment_ended", plan, state.value("ended", false) ? 1.0 : 0.0);
}

}  // namespace

std::string ServerMetrics::render(const HostGauges& host) const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    render_models(out);
  }
  render_engines(out, host);
  render_lifecycle(out, host);
  render_turn(out, host);
  if (host.ledger) render_ledger(out, *host.ledger);
  if (host.experiment) render_experiment(out, *host.experiment);
  return out;
}

}  // namespace baton
