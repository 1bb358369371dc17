// ServeConfig: what `baton serve` runs (where it listens, the GPU turn, the ledger, and
// the models it hosts), read from a TOML file and checked before any model is loaded, so
// that a typo fails at start-up with the key and its line rather than halfway through.
//
// The file (docs/baton.example.toml has every key):
//
//   host = "127.0.0.1"
//   port = 8080                # 0: any free port
//   backend = "cpu"            # cpu|cuda
//   policy = "serialize"       # concurrent|serialize|partition
//   quantum = "op"             # burst|layer|op (op: prefill pieces of at most max_hold_ms)
//   decode_first = true
//   max_hold_ms = 0.5          # serialize/op: the longest a prefill piece holds the turn
//   turn_scope = "process"    # process|host (host: with every baton of the machine; serialize)
//   turn_name = "baton"        # host scope: the turn's name (/dev/shm/baton-turn-NAME)
//   prefill_share = 0.5        # or "auto" (share_controller.h)
//   ledger = "/var/lib/baton/ledger.db"   # or no_ledger = true; unset: default_ledger_path()
//   gpu_sampling = true        # cuda: NVML's per-process GPU use into the ledger, each second
//   api_key = "..."            # unset: $BATON_API_KEY (applied by resolve()); empty: none
//   shutdown_timeout = 30      # seconds
//   max_body_bytes = 8388608
//   http_threads = 2
//   cpu_threads = 0            # 0: the CPU kernels' default
//   watchdog_deadline = 60     # seconds
//   memory_budget_mb = 0       # 0: none; else loading past it evicts the least recently used
//   gpu_memory_fraction = 0.9  # cuda: of the device's memory, what "auto" KV caches may fill
//   load_timeout = 120         # seconds a request waits for its model's on-demand load
//   drain_timeout = 30         # seconds an unloading model's requests have to finish
//
//   [models.chat]              # the table's name is the model's name
//   kind = "chat"              # chat|embedding (default chat)
//   path = "/models/qwen"      # required; relative to the TOML file's folder
//   context_length = 4096      # 0 or unset: the model's max_position_embeddings
//   kv_budget_mb = 512         # or "auto" (cuda: from free memory, kv_sizing.h); default
//                              # auto on cuda, 256 on the cpu (chat), kEmbeddingKvBudgetMb
//   queue_limit = 64
//   turn_weight = 1            # its share of the GPU beside other models (fair_share.h)
//   max_batch = 16             # this key and those below: chat models only; the three
//   prefill_chunk = 256        # defaults by backend (batch_defaults: cpu 16, 256, 64;
//   step_tokens = 64           # cuda 64, 2048, none): streams, prompt tokens, all tokens a step
//   deterministic = false      # true: a request's tokens do not depend on the others running
//   chat_template = "chatml"   # unset: the model's own
//   max_tokens = 512
//   load = "startup"           # startup|on-demand (loaded by the first request for it)
//   idle_ttl = 0               # seconds unused before it is unloaded; 0: never
//   pin = false                # true: never evicted nor unloaded for idleness
//   weights = "bf16"           # bf16|f32|q8|fp8 (model/weight_format.h; q8: 8-bit, faster
//                              # decode; fp8: 8-bit floats on the GPU, backend cuda only;
//                              # default: as stored, q8 for a GGUF file of Q8_0 weights)
//   [models.chat.sampling]     # defaults for requests that leave a field unset
//   temperature = 0.7          # also top_p, top_k, min_p, repetition_penalty,
//                              # presence_penalty, frequency_penalty, seed
//
// Relative paths (a model's path, ledger) are relative to the file's folder, so a file
// works from any working directory. Integers are accepted where a float is expected, not
// the other way round. Models keep the file's order (toml++ keeps a table sorted by key;
// the reader restores the order from the keys' source positions).
// Faults (--inject-*) and fault_engine come from the command line only.
//
// Thread-safety: plain values and pure functions (read_serve_config reads the file;
// validate() looks at the model directories).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/input_processor.h"
#include "baton/gpu/fault_injector.h"
#include "baton/model/weights/weight_format.h"
#include "baton/turn/fair_share.h"
#include "baton/turn/turn_options.h"

namespace baton {

// An embedding model's default kv_budget_mb: the keys and values of one call's tokens.
inline constexpr std::size_t kEmbeddingKvBudgetMb = 64;

// How a model's kv_budget_mb came about.
enum class KvBudgetMode {
  preset,  // not given: kv_budget_mb's default on the CPU, sized from free memory on a GPU
  given,   // a number in the file or --kv-budget-mb
  sized,   // "auto": sized from the device's free memory when loaded (kv_sizing.h)
};

// One model the server hosts.
struct ModelSpec {
  enum class Kind { chat, embedding };
  std::string name;  // what clients send as "model"
  Kind kind = Kind::chat;
  std::filesystem::path dir;       // a Hugging Face model directory
  int context_length = 0;          // 0: the model's max_position_embeddings
  std::size_t kv_budget_mb = 256;  // chat: KV cache; embedding: the tokens of one call
                                   // (default kEmbeddingKvBudgetMb for embedding)
  KvBudgetMode kv_mode = KvBudgetMode::preset;  // chat models: whether it is sized at load
  // chat, unset: the backend's (batch_defaults): requests running at once (cpu 16, cuda 64),
  // prompt tokens per step (256, 2048), tokens per step, decodes and chunks (64, none)
  std::optional<int> max_batch;
  std::optional<int> prefill_chunk;
  std::optional<int> step_tokens;
  // chat: each request's tokens the same whatever else runs (LlmBatchOptions::deterministic)
  bool deterministic = false;
  // Its share of the GPU beside the other models that want it: device time under
  // serialize, SMs under partition (GpuTurn::set_weight); chat and embedding models.
  double turn_weight = kDefaultTurnWeight;
  int queue_limit = 256;           // requests waiting before 429
  std::string chat_template;       // empty: the model's; else chatml|llama3|mistral
  SamplingRequest sampling;        // defaults for requests that leave a field unset
  std::optional<int> max_tokens;   // default max_tokens of a request that sets none
  bool on_demand = false;          // load = "on-demand": loaded by the first request
  double idle_ttl_s = 0.0;         // unused this long: unloaded; 0: never
  bool pin = false;                // never evicted, never unloaded for idleness
  // How the model's matrices are held: bf16 in place, f32 or q8 (weight_format.h).
  std::optional<WeightFormat> weights;  // nullopt: as stored (ModelLoadOptions)
  // weights = "fp8": the host's as stored, a GPU's E4M3 (backend cuda only).
  DevicePrecision device_precision = DevicePrecision::bf16;
  // The flag that configured it (`--model chat=DIR`), named by its errors; empty for a
  // model of the file, whose errors name its keys (`models.chat.path`).
  std::string flag;
};

// "chat" or "embedding", as the API and the file name the kinds.
std::string_view kind_name(ModelSpec::Kind kind);

struct ServeConfig {
  std::string host = "127.0.0.1";
  int port = 8080;               // 0: any free port (the server prints the one it got)
  // What the user wrote to set host and port, named by the errors and warnings about them.
  std::string address_setting = "--host, --port";
  std::string backend = "cpu";   // cpu|cuda
  TurnOptions turn;              // policy, quantum, decode_first, prefill_share, scope, name
  std::filesystem::path ledger;  // empty with no_ledger; default default_ledger_path()
  bool no_ledger = false;
  // A live A/B experiment's plan (experiment/experiment_plan.h); empty: none.
  std::filesystem::path experiment;
  // The configuration read again as at start (the file and the same flags), for POST
  // /v1/admin/reload; none: the server cannot reload.
  std::function<ServeConfig()> reread;
  bool gpu_sampling = true;  // cuda, with a ledger: other GPU clients' use (gpu_sampling.h)
  std::string api_key;  // empty: no authentication
  double shutdown_timeout_s = 30.0;
  std::size_t max_body_bytes = 8u << 20;
  int http_threads = 2;  // I/O threads of the HTTP server
  int cpu_threads = 0;   // 0: default for the model's CPU kernels (generate's --threads)
  double watchdog_deadline_s = 60.0;
  std::size_t memory_budget_mb = 0;  // weights and KV budgets of the loaded models; 0: none
  double gpu_memory_fraction = 0.9;  // cuda: of the device's memory, what sized KV caches fill
  double load_timeout_s = 120.0;     // a request's wait for an on-demand load
  double drain_timeout_s = 30.0;     // an unloading model's requests' time to finish
  FaultPlan faults;          // --inject-* as repro has them
  std::string fault_engine;  // empty: faults on every engine; else that engine's streams only
  std::vector<ModelSpec> models;
};

// Thrown for a bad configuration; names the key (TOML path like "models.chat.max_batch" or
// the flag) and, for an unknown key, the closest known one. Derives from
// std::invalid_argument so errors/ classifies it usage (exit 2).
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Checks what can be checked before loading: at least one model, unique names of
// [A-Za-z0-9._:-]+, directories that exist and hold config.json, numbers in range, a
// known backend and chat template, fault_engine naming a model. Names keys by their TOML
// path. Throws ConfigError.
void validate(const ServeConfig& config);

// Reads a TOML file; does not validate() (flags may add the models). Throws ConfigError
// with file:line:column for a syntax error, an unknown key (with "did you mean"), a wrong
// type (naming the key and the expected type), or an unknown policy, quantum or kind.
ServeConfig read_serve_config(const std::filesystem::path& file);

// The closest of `known` to `key` by edit distance, when close enough to be a likely typo
// (distance <= max(2, size/3)); for "did you mean".
std::optional<std::string> closest_key(std::string_view key,
                                       std::span<const std::string_view> known);

}  // namespace baton
