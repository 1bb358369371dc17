// GpuBurst: one burst of an engine under the GPU turn, the mechanics every engine kind
// shares: it asks for the turn (the engine is `waiting`), holds it (`running`), tells the
// work what share of the device to size itself for, passes yield points to the turn, and
// when the burst ends, releases the turn and hands the BurstRecord (asked, granted, done,
// ok) to the engine's observers (the slowdown detector, the ledger). A burst that is
// destroyed without done() failed: the turn is released and the record says so.
// Thread-safety: a GpuBurst belongs to the engine thread that made it; the state it
// writes is read by other threads (EngineActivity).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/turn/burst_observer.h"
#include "baton/turn/gpu_turn.h"

namespace baton {

// What an engine lends each of its bursts; all of it outlives the burst.
struct BurstContext {
  const std::string& engine;
  GpuTurn& turn;
  TurnClientId client;
  std::atomic<EngineState>& state;
  const std::vector<BurstObserver*>& observers;
};

class GpuBurst {
 public:
  // Blocks until the turn is granted.
  GpuBurst(const BurstContext& context, BurstKind kind, std::uint64_t request_id,
           std::size_t context_tokens);
  ~GpuBurst();
  GpuBurst(const GpuBurst&) = delete;
  GpuBurst& operator=(const GpuBurst&) = delete;

  // The share of the device the work should size itself for now (1: all of it).
  double device_share() const;
  // The time each piece of the next layer may take, when the turn wants the layer in
  // pieces (GpuTurn::piece_budget_ms).
  std::optional<double> piece_budget_ms() const;
  // Between ops or layers: the turn may hand over here.
  void yield_point(Boundary boundary);
  // The burst's work completed: releases the turn and reports the burst. Returns its
  // length from asking for the turn to now, in ms.
  double done();
  // The burst failed, once its work can no longer touch anything: releases the turn (if
  // still held) and reports the failed burst.
  void failed();

 private:
  void finish(bool ok);

  const BurstContext& context_;
  BurstRecord record_;
  TurnHold hold_;
  bool finished_ = false;
};

}  // namespace baton
