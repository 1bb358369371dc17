// TurnMetrics: what the GPU turn counts per client (acquisitions, hand-overs received,
// wait, hold and device time, its weight) and for the whole turn (hand-overs and their latency).
// Thread-safety: record_*() are thread-safe and cheap (relaxed atomics on a per-client
// cache line; hand-over samples under a small mutex). add_client() must happen before
// any record_*() or snapshot() runs concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/common/percentiles.h"

namespace baton {

using TurnClientId = std::uint32_t;

struct ClientTurnStats {
  std::string name;
  std::uint64_t acquisitions = 0;  // non-re-entrant acquires
  std::uint64_t handovers_in = 0;  // acquires that had to wait for another holder
  std::uint64_t yields = 0;        // quantum hand-overs at a yield point
  double wait_s = 0.0;
  double hold_s = 0.0;
  double weight = 1.0;
  double device_s = 0.0;  // device time its holds used (serialize), the share's measure
  // Time it wanted the device: waiting for the turn or holding it.
  double wanted_s() const { return wait_s + hold_s; }
};

struct TurnStats {
  std::vector<ClientTurnStats> clients;
  std::uint64_t handovers = 0;
  LatencySummary handover_us;  // from the releaser's grant to the waiter running
  double prefill_share = 0.0;  // partition: prefill's share at the snapshot; 0 otherwise
};

// What the turn counted between two snapshots of it (`before` taken first, with the same
// clients): the counters' differences, `now`'s weights, hand-over latencies and prefill
// share (percentiles cannot be taken apart). A run reads its window so, leaving out what
// came before it, such as the engines' warm-up bursts at load.
TurnStats stats_since(const TurnStats& now, const TurnStats& before);

class TurnMetrics {
 public:
  TurnClientId add_client(std::string name);
  void record_acquire(TurnClientId client, std::int64_t wait_ns);
  void record_handover(TurnClientId client, std::int64_t latency_ns);
  void record_hold(TurnClientId client, std::int64_t hold_ns);
  void record_yield(TurnClientId client);
  void record_device(TurnClientId client, std::int64_t device_ns);
  void set_weight(TurnClientId client, double weight);
  TurnStats snapshot() const;

 private:
  struct alignas(64) Counters {
    std::string name;
    std::atomic<std::uint64_t> acquisitions{0};
    std::atomic<std::uint64_t> handovers_in{0};
    std::atomic<std::uint64_t> yields{0};
    std::atomic<std::int64_t> wait_ns{0};
    std::atomic<std::int64_t> hold_ns{0};
    std::atomic<std::int64_t> device_ns{0};
    std::atomic<double> weight{1.0};
  };
  // Bounds memory on long runs; the first samples are representative of a steady state.
  static constexpr std::size_t kMaxHandoverSamples = 1 << 20;

  std::vector<std::unique_ptr<Counters>> clients_;  // fixed once the turn is in use
  mutable std::mutex samples_mu_;
  std::uint64_t handovers_ = 0;      // guarded by samples_mu_
  std::vector<double> handover_us_;  // guarded by samples_mu_
};

}  // namespace baton
