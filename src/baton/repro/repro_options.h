// ReproOptions: what one `baton repro` run does (backend, turn policy, engines, time).
// Thread-safety: plain values and pure parsing functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "baton/engine/synthetic/long_dispatch_workload.h"
#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/gpu/commit_limits.h"
#include "baton/gpu/fault_injector.h"
#include "baton/model/weights/weight_format.h"
#include "baton/turn/fair_share.h"
#include "baton/turn/turn_options.h"
#include "baton/watchdog/watchdog.h"

namespace baton {

struct ReproEngine {
  std::string name;  // e.g. "decode-1", "prefill-1", "llm-1"
  SyntheticShape shape;
  int sm_count_target = 0;  // CUDA: size the engine's GEMMs for this many SMs (0: all)
  // A real model instead of a synthetic workload: llm:DIR[:PROMPT_TOKENS], an LLM engine
  // whose requests are PROMPT_TOKENS (default 128) prompt tokens and 16-64 generated
  // ones; embedding:DIR, an embedding engine on the shared executor.
  enum class Model { none, llm, embedding };
  Model model = Model::none;
  std::string model_dir;
  std::size_t prompt_tokens = 0;
  std::string spec;  // what --engine said, e.g. "prefill:2048/4"
  // attend[:KEYS]: bursts of single long attention dispatches (long_dispatch_workload.h).
  std::optional<AttentionShape> attention;
  // Loaded and resident (weights, KV) but sent no requests (the `idle-resident` scenario).
  bool idle = false;
  // +weight=W: the engine's share of the GPU beside the others (GpuTurn::set_weight).
  double turn_weight = kDefaultTurnWeight;
  bool llm() const { return model == Model::llm; }
  bool embedding() const { return model == Model::embedding; }
};

struct ReproOptions {
  std::string backend = "cpu";
  TurnOptions turn;
  FaultPlan faults;
  WatchdogOptions watchdog;
  std::vector<ReproEngine> engines;
  double duration_s = 5.0;
  std::uint64_t seed = 1;
  bool json = false;
  std::string ledger_path;    // empty: no ledger
  std::string ledger_policy;  // the run's policy in the ledger; empty: describe(turn)
  bool gpu_sampling = true;   // cuda, with a ledger: other GPU clients' use (gpu_sampling.h)
  bool compare = false;       // run the engines solo and under every policy, side by side
  // The command-buffer caps; empty: CommitLimits::from_env(). `overpacked` turns them off.
  std::optional<CommitLimits> limits;
  // A failed LLM request is sent again with the same prompt (its prefill redone), as the
  // study's clients did after a hang; otherwise the client moves on to a new one.
  bool retry_failed = false;
  // How the real models' (llm:, embedding:) matrices are held (model/weight_format.h).
  WeightFormat weights = WeightFormat::bf16;
  // The cross-process scenario's children: where to wait, engines ready, until every child
  // is (start_gate.h); empty: the run starts at once.
  std::filesystem::path start_gate;
};

// Parses KIND[:TOKENS][/OPS][@SMS]: "decode", "prefill[:TOKENS]" or "embed" in the
// backend's default shape, OPS GEMMs per layer (column blocks), and an SM target for CUDA;
// "attend[:KEYS]", long single dispatches; or llm:DIR[:PROMPT_TOKENS] or embedding:DIR, a
// model directory. A spec ending in "+idle" is loaded but sent no requests. Names engines
// by kind and count.
// Throws std::invalid_argument with a message for the user.
std::vector<ReproEngine> parse_engine_specs(const std::vector<std::string>& specs,
                                            std::string_view backend = "cpu");

}  // namespace baton
