// PartitionTurn: engines run side by side (no one waits), but while a prefill engine and
// another engine both have work on the device, the chip is split: each prefill gets its
// weight's share of the engines on the device (or a fixed `prefill_share`) and decode the
// rest, so that decode steps find SMs of their own instead of queueing behind prefill
// kernels. An engine alone gets the whole chip back.
// With `prefill_share_auto` the share follows the decoders' measured bursts
// (share_controller.h); to measure a decoder alone now and then, a prefill burst about to
// start waits up to kSoloWait while the decoder runs a few bursts by itself.
// How a workload honours its share is its own business (CUDA: green contexts and
// cuBLAS's SM count target).
// Thread-safety: all members are thread-safe; clients register before the engines start.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/share_controller.h"
#include "baton/turn/turn_options.h"

namespace baton {

class PartitionTurn final : public GpuTurn {
 public:
  static constexpr std::chrono::milliseconds kSoloWait{50};

  explicit PartitionTurn(const TurnOptions& options);
  std::string_view policy_name() const override { return "partition"; }
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId client) override { leave(client); }
  void release_quietly(TurnClientId client) noexcept override { leave(client); }
  std::chrono::nanoseconds yield_point(TurnClientId, Boundary) override { return {}; }
  void set_weight(TurnClientId client, double weight) override;
  double device_share(TurnClientId client) const override;
  TurnStats stats() const override;

 private:
  struct Client {
    std::atomic<int> depth{0};  // re-entrant holds
    std::atomic<BurstKind> kind{BurstKind::decode};
    std::atomic<double> weight{1.0};
    // Of the burst in progress (--prefill-share auto only); its engine's thread only.
    std::chrono::steady_clock::time_point started{};
    bool prefill_at_start = false;
    std::uint64_t prefill_epoch_at_start = 0;
  };
  void leave(TurnClientId client) noexcept;
  void wait_for_solo_bursts(TurnClientId asking);
  void record_decode(TurnClientId id, const Client& c) noexcept;
  // The prefill share by the weights of the engines on the device now: `prefill`'s weight,
  // or all prefills' weights when none is given, over all of theirs.
  double weight_share(const Client* prefill) const;

  const bool by_weights_;
  std::atomic<double> prefill_share_;  // fixed or auto (unused by_weights_)
  TurnMetrics metrics_;
  std::vector<std::unique_ptr<Client>> clients_;  // grows only before the engines start
  std::atomic<int> active_{0};                    // clients holding the turn
  std::atomic<int> active_prefill_{0};            // ... of them running prefill
  std::atomic<std::uint64_t> prefill_epoch_{0};   // prefill bursts begun so far (auto)
  // --prefill-share auto only:
  mutable std::mutex mu_;
  std::condition_variable solo_measured_;
  std::optional<ShareController> controller_;  // guarded by mu_
};

}  // namespace baton
