// run_repro: runs synthetic engines side by side under one turn policy for a while and
// measures them. Each engine gets a client thread that keeps it busy (closed loop:
// decode requests of 16-64 tokens, back-to-back prefill chunks, embedding calls every
// ~20 ms on average), like a server under steady load.
// Thread-safety: run_repro is self-contained; call it from any one thread.
#pragma once

#include <string>
#include <vector>

#include "baton/common/percentiles.h"
#include "baton/repro/repro_options.h"
#include "baton/turn/turn_metrics.h"

namespace baton {

struct EngineResult {
  std::string name;
  BurstKind kind = BurstKind::decode;
  std::uint64_t steps = 0;   // bursts completed
  LatencySummary step_ms;    // burst latency, turn wait included
  double steps_per_s = 0.0;
  std::uint64_t failed_requests = 0;
};

struct ReproResult {
  std::string backend;
  TurnOptions turn;
  double duration_s = 0.0;
  double overlap_s = 0.0;
  std::uint64_t overlap_episodes = 0;
  std::vector<EngineResult> engines;
  TurnStats turn_stats;
};

ReproResult run_repro(const ReproOptions& options);

}  // namespace baton
