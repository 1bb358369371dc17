// validate() and closest_key(); reading the TOML file is in serve_config_toml.cpp, the one
// file that compiles toml++.
#include "baton/server/config/serve_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "baton/common/ip_address.h"
#include "baton/model/chat/chat_template.h"
#include "baton/model/config/config_reader.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/files/model_source.h"
#include "baton/server/api/sampling_limits.h"
#include "baton/turn/host_segment.h"

namespace baton {
namespace {

[[noreturn]] void fail(const std::string& message) { throw ConfigError(message); }

// `key = value: must be ...`, the one shape of every range error.
template <typename T>
void require(bool ok, std::string_view key, const T& value, std::string_view requirement) {
  if (!ok) fail(fmt::format("{} = {}: must be {}", key, value, requirement));
}

void require_real(std::string_view key, double value, double min, double max,
                  std::string_view requirement) {
  require(std::isfinite(value) && value >= min && value <= max, key, value, requirement);
}

bool valid_name(std::string_view name) {
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
  };
  return !name.empty() && std::all_of(name.begin(), name.end(), allowed);
}

// A default the API itself would refuse in a request is refused in the file.
void require_limit(const std::string& at, const std::optional<double>& value,
                   const SamplingLimit& limit) {
  if (!value) return;
  const double x = *value;
  const bool ok =
      std::isfinite(x) && (limit.above_low ? x > limit.low : x >= limit.low) && x <= limit.high;
  require(ok, at + std::string(limit.name), x,
          fmt::format("in {}{}, {}] (as in a request)", limit.above_low ? "(" : "[", limit.low,
                      limit.high));
}

void validate_sampling(const std::string& model, const SamplingRequest& s) {
  const std::string at = "models." + model + ".sampling.";
  require_limit(at, s.temperature, kTemperatureLimit);
  require_limit(at, s.top_p, kTopPLimit);
  require_limit(at, s.min_p, kMinPLimit);
  require_limit(at, s.repetition_penalty, kRepetitionPenaltyLimit);
  require_limit(at, s.presence_penalty, kPresencePenaltyLimit);
  require_limit(at, s.frequency_penalty, kFrequencyPenaltyLimit);
  if (s.top_k) require(*s.top_k >= 0, at + "top_k", *s.top_k, ">= 0 (0: no limit)");
}

void validate_model_dir(const ModelSpec& model) {
  // What the user wrote: the flag, or the file's key.
  const std::string where =
      model.flag.empty() ? fmt::format("models.{}.path", model.name) : model.flag;
  std::error_code ec;
  // A GGUF file (or a folder of one): its metadata must make a config.
  try {
    if (const ModelSource source = ModelSource::open(model.dir); source.gguf() != nullptr) {
      read_model_config(source);
      return;
    }
  } catch (const ModelFileError& error) {
    fail(fmt::format("{}: {}", where, error.what()));
  }
  if (!std::filesystem::is_directory(model.dir, ec)) {
    fail(fmt::format("{}: {} is not a directory", where, model.dir.string()));
  }
  if (!std::filesystem::is_regular_file(model.dir / "config.json", ec)) {
    fail(fmt::format("{}: {} holds no config.json (not a Hugging Face model directory)", where,
                     model.dir.string()));
  }
}

void validate_model(const ModelSpec& m) {
  const std::string at = "models." + m.name + ".";
  require(m.context_length >= 0, at + "context_length", m.context_length,
          ">= 0 (0: the model's max_position_embeddings)");
  // Beyond 1 TiB the byte count would be a typo, not a budget.
  require(m.kv_budget_mb >= 1 && m.kv_budget_mb <= (std::size_t{1} << 20), at + "kv_budget_mb",
          m.kv_budget_mb, "in 1..1048576");
  if (m.kv_mode == KvBudgetMode::sized && m.kind != ModelSpec::Kind::chat) {
    fail(
        fmt::format("{}kv_budget_mb = \"auto\": only a chat model's KV cache is sized from "
                    "free memory; give an embedding model a number",
                    at));
  }
  if (m.max_batch) require(*m.max_batch >= 1, at + "max_batch", *m.max_batch, ">= 1");
  if (m.prefill_chunk) {
    require(*m.prefill_chunk >= 1, at + "prefill_chunk", *m.prefill_chunk, ">= 1");
  }
  if (m.step_tokens) {
    require(*m.step_tokens >= 0, at + "step_tokens", *m.step_tokens, ">= 0 (0: no budget)");
  }
  if (const auto problem = weight_problem(m.turn_weight)) fail(at + "turn_weight: " + *problem);
  require(m.queue_limit >= 0, at + "queue_limit", m.queue_limit, ">= 0");
  if (m.max_tokens) require(*m.max_tokens >= 1, at + "max_tokens", *m.max_tokens, ">= 1");
  if (!m.chat_template.empty()) {
    try {
      parse_chat_family(m.chat_template);
    } catch (const std::invalid_argument& e) {
      fail(fmt::format("{}chat_template: {}", at, e.what()));
    }
  }
  require_real(at + "idle_ttl", m.idle_ttl_s, 0.0, 1e9, ">= 0 seconds (0: never)");
  validate_sampling(m.name, m.sampling);
  validate_model_dir(m);
}

void validate_models(const ServeConfig& config) {
  if (config.models.empty()) {
    fail(
        "no models: give at least one ([models.NAME] in the config file, --model NAME=DIR or "
        "--embedding NAME=DIR)");
  }
  std::set<std::string_view> names;
  for (const ModelSpec& model : config.models) {
    if (!valid_name(model.name)) {
      fail(
          fmt::format("model name \"{}\": must be one or more of A-Z a-z 0-9 . _ : -", model.name));
    }
    if (!names.insert(model.name).second) {
      fail(fmt::format("two models are named \"{}\"; a name must be unique", model.name));
    }
  }
  for (const ModelSpec& model : config.models) {
    validate_model(model);
    if (model.device_precision == DevicePrecision::fp8 && config.backend != "cuda") {
      fail(fmt::format(
          "{}: fp8 weights are held on a GPU (backend = \"cuda\"); backend = \"{}\" has no "
          "fp8 kernels "
          "(q8 is its 8-bit format)",
          model.flag.empty() ? "models." + model.name + ".weights = \"fp8\"" : "--weights fp8",
          config.backend));
    }
    if (model.kv_mode == KvBudgetMode::sized && config.backend != "cuda") {
      const std::string what = model.flag.empty()
                                   ? "models." + model.name + ".kv_budget_mb = \"auto\""
                                   : "--kv-budget-mb auto";
      fail(
          fmt::format("{}: sizes the KV cache from a GPU's free memory; backend = \"{}\" "
                      "needs a number of MB (default 256)",
                      what, config.backend));
    }
  }
  if (!config.fault_engine.empty() && !names.contains(config.fault_engine)) {
    fail(fmt::format("fault engine \"{}\" (--inject-fault-engine) names no model",
                     config.fault_engine));
  }
}

void validate_server(const ServeConfig& c) {
  require(is_ip_address(c.host), "host", fmt::format("\"{}\"", c.host),
          "an IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0, ::1)");
  require(c.port >= 0 && c.port <= 65535, "port", c.port, "in 0..65535 (0: any free port)");
  require(c.backend == "cpu" || c.backend == "cuda", "backend", fmt::format("\"{}\"", c.backend),
          "cpu or cuda");
  if (c.turn.prefill_share) {
    require_real("prefill_share", *c.turn.prefill_share, 0.01, 1.0, "in [0.01, 1]");
  }
  require_real("max_hold_ms", c.turn.max_hold_ms, kMinMaxHoldMs, kMaxMaxHoldMs, "in [0.05, 10000]");
  if (c.turn.scope == TurnScope::host && c.turn.policy == TurnPolicy::partition) {
    fail(
        "turn_scope = \"host\" with policy = \"partition\": partition splits one process's "
        "device; a host-wide turn is serialize (or concurrent)");
  }
  if (c.turn.scope == TurnScope::host && !valid_host_turn_name(c.turn.host_name)) {
    fail(fmt::format("turn_name \"{}\": must be 1 to 200 of A-Z a-z 0-9 . _ -", c.turn.host_name));
  }
  if (c.no_ledger && !c.ledger.empty()) {
    fail(fmt::format("ledger = {} and no_ledger: give one or the other", c.ledger.string()));
  }
  require_real("shutdown_timeout", c.shutdown_timeout_s, 0.0, 1e9, ">= 0 seconds");
  require(c.max_body_bytes >= 1, "max_body_bytes", c.max_body_bytes, ">= 1");
  require(c.http_threads >= 1 && c.http_threads <= 64, "http_threads", c.http_threads, "in 1..64");
  require(c.cpu_threads >= 0 && c.cpu_threads <= 4096, "cpu_threads", c.cpu_threads,
          "in 0..4096 (0: the default)");
  require_real("watchdog_deadline", c.watchdog_deadline_s, 0.01, 3600.0, "in [0.01, 3600] seconds");
  require(c.memory_budget_mb <= (std::size_t{1} << 24), "memory_budget_mb", c.memory_budget_mb,
          "in 0..16777216 (0: none)");
  require_real("gpu_memory_fraction", c.gpu_memory_fraction, 0.05, 1.0, "in [0.05, 1]");
  require_real("load_timeout", c.load_timeout_s, 0.0, 1e6, ">= 0 seconds");
  require_real("drain_timeout", c.drain_timeout_s, 0.0, 1e6, ">= 0 seconds");
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the Levenshtein table at a time.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string_view kind_name(ModelSpec::Kind kind) {
  return kind == ModelSpec::Kind::chat ? "chat" : "embedding";
}

void validate(const ServeConfig& config) {
  validate_server(config);
  validate_models(config);
}

std::optional<std::string> closest_key(std::string_view key,
                                       std::span<const std::string_view> known) {
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : known) {
    const std::size_t distance = edit_distance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace baton
