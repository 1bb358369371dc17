#include "baton/cli/serve_options.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>

#include "baton/cli/finite_range.h"
#include "baton/common/ip_address.h"
#include "baton/ledger/ledger_path.h"
#include "baton/turn/fair_share.h"

namespace baton {
namespace {

// --kv-budget-mb's number: 1..1048576 (MB), nothing else.
std::optional<std::size_t> parse_kv_budget_mb(const std::string& value) {
  std::size_t mb = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), mb);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  if (mb < 1 || mb > (std::size_t{1} << 20)) return std::nullopt;
  return mb;
}

void add_server_flags(CLI::App& cmd, ServeConfig& v) {
  cmd.add_option("--host", v.host, "Address to listen on (IPv4 or IPv6)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& host) {
            return is_ip_address(host) ? std::string()
                                       : host + " is not an IPv4 or IPv6 address (e.g. "
                                                "127.0.0.1, 0.0.0.0, ::1)";
          },
          "ADDRESS"));
  cmd.add_option("--port", v.port, "Port to listen on (0: any free port, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--backend", v.backend, "Device backend")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd.add_option("--api-key", v.api_key,
                 "The key clients must send (Authorization: Bearer KEY); default "
                 "$BATON_API_KEY; none: no authentication");
  cmd.add_option("--shutdown-timeout", v.shutdown_timeout_s,
                 "Seconds running requests get to finish after SIGTERM or SIGINT")
      ->capture_default_str()
      ->check(finite_range(0.0, 86400.0));
  cmd.add_option("--max-body-bytes", v.max_body_bytes, "The largest request body accepted")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  cmd.add_option("--http-threads", v.http_threads, "I/O threads of the HTTP server")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd.add_option("--threads", v.cpu_threads,
                 "CPU threads of the models' kernels (default: $BATON_CPU_THREADS or all)")
      ->check(CLI::Range(1, 4096));
  cmd.add_option("--watchdog-deadline", v.watchdog_deadline_s,
                 "Seconds a step may run without progress before it counts as hung")
      ->capture_default_str()
      ->check(finite_range(0.01, 3600.0));
  cmd.add_option("--memory-budget-mb", v.memory_budget_mb,
                 "Weights and KV budgets of the loaded models together; a load past it evicts "
                 "the least recently used unpinned model (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 24));
  cmd.add_option("--gpu-memory-fraction", v.gpu_memory_fraction,
                 "cuda: of the device's memory, what the KV caches sized from free memory may "
                 "fill (with every other use counted)")
      ->capture_default_str()
      ->check(finite_range(0.05, 1.0));
  cmd.add_option("--load-timeout", v.load_timeout_s,
                 "Seconds a request waits for its model's on-demand load")
      ->capture_default_str()
      ->check(finite_range(0.0, 1e6));
  cmd.add_option("--drain-timeout", v.drain_timeout_s,
                 "Seconds an unloading model's requests get to finish before they fail")
      ->capture_default_str()
      ->check(finite_range(0.0, 1e6));
}

void add_turn_flags(CLI::App& cmd, ServeFlags& flags) {
  cmd.add_option("--policy", flags.policy, "GPU turn policy: concurrent, serialize, partition")
      ->capture_default_str()
      ->check(CLI::IsMember({"concurrent", "serialize", "partition"}));
  cmd.add_option("--quantum", flags.quantum,
                 "serialize: hand the turn over per burst, per layer or per op")
      ->capture_default_str()
      ->check(CLI::IsMember({"burst", "layer", "op"}));
  cmd.add_flag("--decode-first", flags.values.turn.decode_first,
               "serialize: waiting decode bursts go before waiting prefill chunks (the "
               "default; --decode-first=false for first come, first served)")
      ->capture_default_str();
  cmd.add_option("--max-hold-ms", flags.values.turn.max_hold_ms,
                 "serialize/op: the longest a prefill piece may hold the turn while other "
                 "engines want it, in ms")
      ->capture_default_str()
      ->check(finite_range(kMinMaxHoldMs, kMaxMaxHoldMs));
  cmd.add_option("--turn-scope", flags.turn_scope,
                 "Who takes turns: this process's engines, or (host; serialize) those of every "
                 "baton process of the machine with the same --turn-name")
      ->capture_default_str()
      ->check(CLI::IsMember({"process", "host"}));
  cmd.add_option("--turn-name", flags.values.turn.host_name,
                 "--turn-scope host: the turn's name (/dev/shm/baton-turn-NAME)")
      ->capture_default_str();
  cmd.add_option("--prefill-share", flags.prefill_share,
                 "partition: prefill's share of the chip while other engines run; weights: "
                 "the engines' --turn-weight; auto: from the decoders' measured steps")
      ->capture_default_str()
      ->check(prefill_share_check());
  CLI::Option* ledger =
      cmd.add_option("--ledger", flags.ledger,
                     "Record busy intervals and fault events into this SQLite file (default: "
                     "$BATON_LEDGER, else the XDG state directory)");
  cmd.add_flag("--no-ledger", flags.values.no_ledger, "Record no ledger")->excludes(ledger);
  cmd.add_option("--experiment", flags.values.experiment,
                 "Run a live A/B experiment of two turn policies (a TOML plan: "
                 "docs/analysis.md, \"The live experiment\")")
      ->check(CLI::ExistingFile);
  cmd.add_flag("--no-gpu-sampling", flags.no_gpu_sampling,
               "cuda: record no process's GPU use (NVML) into the ledger");
}

void add_model_flags(CLI::App& cmd, ServeFlags& flags) {
  cmd.add_option("--config", flags.config, "A TOML config file (docs/baton.example.toml)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--model", flags.models, "A chat model: NAME=DIR (repeat for more)");
  cmd.add_option("--turn-weight", flags.turn_weights,
                 "A model's share of the GPU beside the others that want it: NAME=WEIGHT "
                 "(serialize: of device time; partition: of the chip; default 1; repeat)");
  cmd.add_option("--embedding", flags.embeddings, "An embedding model: NAME=DIR (repeat for more)");
  ModelSpec& m = flags.model;
  const std::string every = " (every --model given on the command line)";
  cmd.add_option("--max-batch", flags.max_batch,
                 "Requests running at once (default: 16 on the cpu, 64 on cuda)" + every)
      ->check(CLI::Range(1, 1 << 16));
  cmd.add_option("--kv-budget-mb", flags.kv_budget,
                 "Memory for the KV cache in MB, or auto: from the GPU's free memory (default: "
                 "auto on cuda, 256 on the cpu)" + every)
      ->check(CLI::Validator(
          [](const std::string& value) {
            if (value == "auto" || parse_kv_budget_mb(value)) return std::string();
            return value + " is not 1..1048576 (MB) or auto";
          },
          "MB|auto"));
  cmd.add_option("--context-length", m.context_length,
                 "Tokens of context, 0: the model's max_position_embeddings" + every)
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  cmd.add_option("--prefill-chunk", flags.prefill_chunk,
                 "Prompt tokens per step (default: 256 on the cpu, 2048 on cuda)" + every)
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--step-tokens", flags.step_tokens,
                 "Tokens per step, decodes first, then prompt chunks in what is left; 0: no "
                 "budget (default: 64 on the cpu, none on cuda)" + every)
      ->check(CLI::Range(0, 1 << 20));
  cmd.add_flag("--deterministic", m.deterministic,
               "Each request's tokens the same whatever else runs: each prompt in the chunks "
               "it has alone (on cuda several in a step of fixed rows), decode products whose "
               "rows do not depend on each other, no prefix reuse; "
               "costs throughput (docs/benchmarks.md)" +
                   every);
  cmd.add_option("--queue-limit", m.queue_limit,
                 "Requests waiting before the server answers 429" + every)
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  cmd.add_option("--weights", flags.weights,
                 "Weights at load: bf16 (bf16 read in place), f32, or q8 (8 bits a weight: "
                 "decode reads about half the bytes of bf16); every --model and --embedding. "
                 "Default: as stored (q8 for a GGUF file of Q8_0 weights, else bf16); fp8 "
                 "(--backend cuda): 8-bit floats on the GPU, a scale per row, decode reads "
                 "half the bytes of bf16")
      ->check(CLI::IsMember({"bf16", "f32", "q8", "fp8"}));
}

void add_fault_flags(CLI::App& cmd, ServeConfig& v) {
  FaultPlan& f = v.faults;
  const auto non_negative = finite_range(0.0, 1e9);
  const auto probability = finite_range(0.0, 1.0);
  const auto add = [&cmd](const char* name, double& value, const char* help) {
    return cmd.add_option(name, value, help)->group("Fault injection");
  };
  add("--inject-hang-rate", f.hang_rate, "Hangs per second of overlap (two or more streams busy)")
      ->check(non_negative);
  add("--inject-hang-prob", f.hang_probability, "Probability that a command buffer hangs")
      ->check(probability);
  add("--inject-timeout-prob", f.timeout_probability,
      "Probability that a command buffer fails with a timeout")
      ->check(probability);
  add("--inject-slowdown-rate", f.slowdown_rate, "Slowdown episodes per second")
      ->check(non_negative);
  add("--slowdown-factor", f.slowdown_factor, "How many times slower")
      ->capture_default_str()
      ->check(finite_range(1.0, 1000.0));
  add("--slowdown-seconds", f.slowdown_seconds, "How long a slowdown episode lasts")
      ->capture_default_str()
      ->check(finite_range(0.001, 3600.0));
  add("--inject-fatal-after", f.fatal_after_s,
      "After this many seconds the device ignores submissions (fatal: exit 70)")
      ->check(finite_range(0.001, 1e9));
  add("--inject-device-fault-after", f.device_fault_after_s,
      "After this many seconds one command buffer faults on the device (fatal: exit 70)")
      ->check(finite_range(0.001, 1e9));
  cmd.add_option("--fault-seed", f.seed, "Seed of the fault injector")
      ->capture_default_str()
      ->group("Fault injection");
  cmd.add_option("--inject-fault-engine", v.fault_engine,
                 "Inject faults only into this model's streams (default: every engine's)")
      ->group("Fault injection");
}

bool given(const CLI::App& cmd, const char* flag) { return cmd.count(flag) > 0; }

void apply_server_flags(const ServeFlags& flags, const CLI::App& cmd, ServeConfig& c) {
  const ServeConfig& v = flags.values;
  if (given(cmd, "--host")) c.host = v.host;
  if (given(cmd, "--port")) c.port = v.port;
  if (given(cmd, "--host") || given(cmd, "--port")) c.address_setting = v.address_setting;
  if (given(cmd, "--backend")) c.backend = v.backend;
  if (given(cmd, "--api-key")) c.api_key = v.api_key;
  if (given(cmd, "--shutdown-timeout")) c.shutdown_timeout_s = v.shutdown_timeout_s;
  if (given(cmd, "--max-body-bytes")) c.max_body_bytes = v.max_body_bytes;
  if (given(cmd, "--http-threads")) c.http_threads = v.http_threads;
  if (given(cmd, "--threads")) c.cpu_threads = v.cpu_threads;
  if (given(cmd, "--watchdog-deadline")) c.watchdog_deadline_s = v.watchdog_deadline_s;
  if (given(cmd, "--memory-budget-mb")) c.memory_budget_mb = v.memory_budget_mb;
  if (given(cmd, "--gpu-memory-fraction")) c.gpu_memory_fraction = v.gpu_memory_fraction;
  if (given(cmd, "--load-timeout")) c.load_timeout_s = v.load_timeout_s;
  if (given(cmd, "--drain-timeout")) c.drain_timeout_s = v.drain_timeout_s;
  if (given(cmd, "--policy")) c.turn.policy = *parse_turn_policy(flags.policy);
  if (given(cmd, "--quantum")) c.turn.quantum = *parse_quantum(flags.quantum);
  if (given(cmd, "--decode-first")) c.turn.decode_first = v.turn.decode_first;
  if (given(cmd, "--max-hold-ms")) c.turn.max_hold_ms = v.turn.max_hold_ms;
  if (given(cmd, "--turn-scope")) c.turn.scope = *parse_turn_scope(flags.turn_scope);
  if (given(cmd, "--turn-name")) c.turn.host_name = v.turn.host_name;
  if (given(cmd, "--prefill-share")) apply(c.turn, *parse_prefill_share(flags.prefill_share));
  // The file has no faults: the flags' plan is the whole plan.
  c.faults = v.faults;
  c.fault_engine = v.fault_engine;
}

void apply_ledger(const ServeFlags& flags, const CLI::App& cmd, ServeConfig& c) {
  if (given(cmd, "--ledger")) {
    c.ledger = std::filesystem::absolute(flags.ledger);
    c.no_ledger = false;
  }
  if (given(cmd, "--no-ledger") && flags.values.no_ledger) {
    c.ledger.clear();
    c.no_ledger = true;
  }
  if (given(cmd, "--no-gpu-sampling")) c.gpu_sampling = false;
  if (given(cmd, "--experiment")) c.experiment = std::filesystem::absolute(flags.values.experiment);
  if (c.no_ledger || !c.ledger.empty()) return;
  try {
    c.ledger = default_ledger_path();
  } catch (const std::runtime_error& e) {
    throw ConfigError(std::string("no ledger path: ") + e.what() +
                      "; give --ledger PATH or --no-ledger");
  }
}

// NAME=DIR of --model or --embedding; DIR relative to the working directory.
ModelSpec parse_model_flag(const char* flag, const std::string& spec, ModelSpec model) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw ConfigError(std::string(flag) + " " + spec + ": expected NAME=DIR");
  }
  model.name = spec.substr(0, eq);
  model.dir = std::filesystem::absolute(spec.substr(eq + 1)).lexically_normal();
  model.flag = std::string(flag) + " " + spec;
  return model;
}

void append_models(const ServeFlags& flags, ServeConfig& c) {
  std::set<std::string> names;
  for (const ModelSpec& model : c.models) names.insert(model.name);
  const auto append = [&](const char* flag, const std::string& spec, const ModelSpec& base) {
    ModelSpec model = parse_model_flag(flag, spec, base);
    if (!names.insert(model.name).second) {
      throw ConfigError(std::string(flag) + " " + spec + ": a model named \"" + model.name +
                        "\" is already configured" +
                        (flags.config.empty() ? "" : " (in " + flags.config + " or a flag)"));
    }
    c.models.push_back(std::move(model));
  };
  const WeightsChoice weights =
      flags.weights.empty() ? WeightsChoice{} : parse_weights_choice(flags.weights).value();
  ModelSpec chat = flags.model;
  chat.weights = weights.host;
  chat.device_precision = weights.device;
  if (flags.max_batch >= 1) chat.max_batch = flags.max_batch;
  if (flags.prefill_chunk >= 1) chat.prefill_chunk = flags.prefill_chunk;
  if (flags.step_tokens >= 0) chat.step_tokens = flags.step_tokens;
  if (flags.kv_budget == "auto") {
    chat.kv_mode = KvBudgetMode::sized;
  } else if (const auto mb = parse_kv_budget_mb(flags.kv_budget)) {
    chat.kv_budget_mb = *mb;
    chat.kv_mode = KvBudgetMode::given;
  }
  ModelSpec embedding;
  embedding.kind = ModelSpec::Kind::embedding;
  embedding.kv_budget_mb = kEmbeddingKvBudgetMb;
  embedding.weights = weights.host;
  embedding.device_precision = weights.device;
  for (const std::string& spec : flags.models) append("--model", spec, chat);
  for (const std::string& spec : flags.embeddings) append("--embedding", spec, embedding);
}

// --turn-weight NAME=WEIGHT, for a model of the file or the flags.
void apply_turn_weights(const ServeFlags& flags, ServeConfig& c) {
  for (const std::string& spec : flags.turn_weights) {
    const auto eq = spec.find('=');
    double weight = 0.0;
    const char* end = spec.data() + spec.size();
    const bool number =
        eq != std::string::npos && std::from_chars(spec.data() + eq + 1, end, weight).ptr == end;
    if (!number || eq == 0 || eq + 1 == spec.size()) {
      throw ConfigError("--turn-weight " + spec + ": expected NAME=WEIGHT, e.g. chat=3");
    }
    const std::string name = spec.substr(0, eq);
    const auto model = std::find_if(c.models.begin(), c.models.end(),
                                    [&](const ModelSpec& m) { return m.name == name; });
    if (model == c.models.end()) {
      throw ConfigError("--turn-weight " + spec + ": no model is named \"" + name + "\"");
    }
    if (const auto problem = weight_problem(weight)) {
      throw ConfigError("--turn-weight " + spec + ": " + *problem);
    }
    model->turn_weight = weight;
  }
}

}  // namespace

void add_serve_options(CLI::App& cmd, ServeFlags& flags) {
  add_model_flags(cmd, flags);
  add_server_flags(cmd, flags.values);
  add_turn_flags(cmd, flags);
  add_fault_flags(cmd, flags.values);
}

ServeConfig resolve(const ServeFlags& flags, const CLI::App& cmd) {
  ServeConfig c = flags.config.empty() ? ServeConfig{} : read_serve_config(flags.config);
  apply_server_flags(flags, cmd, c);
  apply_ledger(flags, cmd, c);
  append_models(flags, c);
  apply_turn_weights(flags, c);
  if (c.api_key.empty()) {
    if (const char* key = std::getenv("BATON_API_KEY")) c.api_key = key;
  }
  try {
    const TurnOptions env = TurnOptions::with_env_defaults(c.backend);
    c.turn.spin = env.spin;
    c.turn.handover_spin = env.handover_spin;
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
  validate(c);
  return c;
}

}  // namespace baton
