// ConcurrentTurn: no arbitration. acquire/release only count acquisitions, so the
// policy costs nothing measurable; nothing is drained at release.
// Thread-safety: all members are thread-safe.
#pragma once

#include "baton/turn/gpu_turn.h"

namespace baton {

class ConcurrentTurn final : public GpuTurn {
 public:
  std::string_view policy_name() const override { return "concurrent"; }
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId) override {}
  void release_quietly(TurnClientId) noexcept override {}
  std::chrono::nanoseconds yield_point(TurnClientId, Boundary) override { return {}; }
  // Recorded for the metrics only: nobody waits, so there is nothing to share.
  void set_weight(TurnClientId client, double weight) override;
  TurnStats stats() const override { return metrics_.snapshot(); }

 private:
  TurnMetrics metrics_;
};

}  // namespace baton
