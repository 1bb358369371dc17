// run_repro: runs engines side by side under one turn policy for a while and measures
// them: synthetic ones, and real models' LLM engines (llm:DIR). Each engine gets a client
// thread that keeps it busy (closed loop: decode requests of 16-64 tokens, back-to-back
// prefill chunks, embedding calls every ~20 ms on average, LLM requests of a fixed prompt
// length and 16-64 generated tokens), like a server under steady load. A request that fails with a
// GpuError is counted and the client sends the next one, as a retrying client would.
// The run ends early when the device turns fatal (FaultReport::fatal).
// Thread-safety: run_repro is self-contained; call it from any one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "baton/common/percentiles.h"
#include "baton/ledger/ledger.h"
#include "baton/repro/repro_options.h"
#include "baton/turn/turn_metrics.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

struct EngineResult {
  std::string name;
  BurstKind kind = BurstKind::decode;
  std::string model;              // "llm" or "embedding" for a real model's engine, else empty
  std::uint64_t steps = 0;        // bursts completed
  LatencySummary step_ms;         // burst latency, turn wait included
  LatencySummary decode_step_ms;  // of its decode bursts only (an LLM engine's)
  double steps_per_s = 0.0;
  std::uint64_t failed_requests = 0;  // the engine's count, the one cut off by the stop included
  std::uint64_t gpu_failures = 0;     // requests its client saw fail with a GpuError
  std::uint64_t retries = 0;          // of those, sent again with the same prompt
  std::uint64_t hangs = 0;            // hangs blamed on this engine
  std::uint64_t prefill_pieces = 0;   // an LLM engine's prefill layers cut in pieces
  double prefill_piece_layers = 0.0;  // ... the share of a layer each covered, summed
  double longest_piece_ms = 0.0;
  double warm_up_ms = 0.0;  // the engine's warm-up at load      // ... and the longest piece
};

struct FaultReport {
  struct Counts {
    std::uint64_t injected = 0;
    std::uint64_t detected = 0;
  };
  std::map<FaultKind, Counts> by_kind;  // hang, timeout, submissions_ignored, slowdown, other
  std::uint64_t recovered = 0;
  bool fatal = false;
  std::string fatal_detail;
  LatencySummary detect_latency_ms;  // injected hangs: stall to detection
  // The hang rate's arrivals, and those that never landed (FaultInjector's counts).
  std::uint64_t hangs_arrived = 0;
  std::uint64_t hangs_dropped = 0;
  // Slowdown episodes injected, those the detector flagged a burst of, and flagged bursts
  // that overlap no injected episode (false positives where slowdowns are injected).
  std::uint64_t slowdown_episodes = 0;
  std::uint64_t slowdown_episodes_detected = 0;
  std::uint64_t slowdowns_outside_episodes = 0;
  std::uint64_t injected() const;  // all kinds
  std::uint64_t detected() const;
};

struct ReproResult {
  std::string backend;
  TurnOptions turn;
  double duration_s = 0.0;
  double overlap_s = 0.0;
  std::uint64_t overlap_episodes = 0;
  std::vector<EngineResult> engines;
  TurnStats turn_stats;
  FaultReport faults;
  std::vector<FaultEvent> events;
  std::optional<LedgerWriteStatus> ledger;  // after the run's end; none without --ledger
};

ReproResult run_repro(const ReproOptions& options);

}  // namespace baton
