// SwitchableTurn: a GpuTurn whose policy changes while the engines run (issue 51: the live
// A/B experiment and the admin's switch), without a restart. It holds one inner turn per
// arm, built up front with every client registered on each, and forwards each call to the
// current arm. A switch closes a gate in front of new bursts, waits until no burst is in
// flight (each one inside finishes: a re-entrant acquire or a yield point passes the gate),
// moves to the new arm and opens the gate: a burst waits at most for the bursts already
// running, and no request fails. The switch reports how long the gate was closed.
// Thread-safety: as GpuTurn; switch_to() from any thread (switches take turns);
// current() and stats() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/turn/gpu_turn.h"

namespace baton {

class SwitchableTurn final : public GpuTurn {
 public:
  struct Arm {
    std::string name;  // how reports and the ledger call it (describe(TurnOptions))
    std::unique_ptr<GpuTurn> turn;
  };
  struct Switch {
    std::size_t from = 0;
    std::size_t to = 0;
    double gate_closed_ms = 0.0;  // new bursts held while the ones in flight finished
  };

  // At least one arm; `first` runs first. Throws std::invalid_argument otherwise.
  explicit SwitchableTurn(std::vector<Arm> arms, std::size_t first = 0);

  std::size_t arm_count() const { return arms_.size(); }
  const std::string& arm_name(std::size_t arm) const { return arms_.at(arm).name; }
  std::size_t current() const { return current_.load(std::memory_order_acquire); }
  // A switch is waiting for the bursts in flight; new ones wait at the gate.
  bool gate_closed() const;
  // Moves to `arm` once no burst is in flight (a no-op for the current arm). Must not be
  // called from a thread that holds the turn (it would wait for itself). Throws
  // std::out_of_range for an arm that does not exist.
  Switch switch_to(std::size_t arm);

  std::string_view policy_name() const override;
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId client) override;
  void release_quietly(TurnClientId client) noexcept override;
  std::chrono::nanoseconds yield_point(TurnClientId client, Boundary boundary) override;
  double device_share(TurnClientId client) const override;
  std::optional<double> piece_budget_ms(TurnClientId client, BurstKind kind) const override;
  void set_weight(TurnClientId client, double weight) override;
  // Counters summed over the arms (they only grow); latencies and shares of the current arm.
  TurnStats stats() const override;

 private:
  GpuTurn& turn() const { return *arms_[current()].turn; }
  void enter();  // waits while the gate is closed; then a burst is in flight
  void leave();

  std::vector<Arm> arms_;
  std::atomic<std::size_t> current_;
  std::vector<int> depth_;  // per client: its holds, re-entrant (only its engine's thread)

  std::mutex switch_mu_;  // one switch at a time
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool gate_closed_ = false;  // guarded by mu_
  int in_flight_ = 0;         // bursts past the gate; guarded by mu_
};

}  // namespace baton
