// PartitionTurn: engines run side by side (no one waits), but while a prefill engine and
// another engine both have work on the device, the chip is split: prefill gets
// `prefill_share` of it and decode the rest, so that decode steps find SMs of their own
// instead of queueing behind prefill kernels. An engine alone gets the whole chip back.
// How a workload honours its share is its own business (CUDA: green contexts and
// cuBLAS's SM count target).
// Thread-safety: all members are thread-safe; clients register before the engines start.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/turn_options.h"

namespace baton {

class PartitionTurn final : public GpuTurn {
 public:
  explicit PartitionTurn(const TurnOptions& options);
  std::string_view policy_name() const override { return "partition"; }
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId client) override { leave(client); }
  void release_quietly(TurnClientId client) noexcept override { leave(client); }
  void yield_point(TurnClientId, Boundary) override {}
  double device_share(TurnClientId client) const override;
  TurnStats stats() const override { return metrics_.snapshot(); }

 private:
  struct Client {
    std::atomic<int> depth{0};  // re-entrant holds
    std::atomic<BurstKind> kind{BurstKind::decode};
  };
  void leave(TurnClientId client) noexcept;

  const double prefill_share_;
  TurnMetrics metrics_;
  std::vector<std::unique_ptr<Client>> clients_;  // grows only before the engines start
  std::atomic<int> active_{0};                    // clients holding the turn
  std::atomic<int> active_prefill_{0};            // ... of them running prefill
};

}  // namespace baton
