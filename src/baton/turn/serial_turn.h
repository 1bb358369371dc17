// SerialTurn: the `serialize` policy. One holder at a time, first come first served
// within a priority (optionally decode bursts first), re-entrant on the holding thread. Before the turn
// passes on, the holder drains its own stream and the default stream, so no two streams
// ever have work in flight at once.
//
// Hand-over is explicit: the releaser picks the next waiter under the one mutex and
// sets that waiter's own flag. A waiter spins on its flag for TurnOptions::spin, then
// parks on it (futex), so a hand-over to a spinning waiter costs well under a
// microsecond and nobody burns a core through a long wait.
//
// Priorities never starve a waiter for good: one that has waited starved_after
// (TurnOptions) goes next whatever its rank, and holds the turn for at least floor_slice
// (no pieces, no yields) before a higher priority may take it back, so a lower-priority
// model still makes progress (a few per cent of the device) under a higher one that is
// always busy.
//
// Thread-safety: see GpuTurn. One mutex (mu_) guards the holder and the line of waiters.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/serial_steps.h"
#include "baton/turn/turn_options.h"

namespace baton {

class SerialTurn final : public GpuTurn {
 public:
  SerialTurn(Stream& default_stream, TurnOptions options);

  std::string_view policy_name() const override { return "serialize"; }
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId client) override;
  void release_quietly(TurnClientId client) noexcept override;
  void yield_point(TurnClientId client, Boundary boundary) override;
  std::optional<double> piece_budget_ms(TurnClientId client, BurstKind kind) const override;
  void set_priority(TurnClientId client, int priority) override;
  TurnStats stats() const override { return metrics_.snapshot(); }
  // Clients waiting in line right now (a momentary reading).
  std::size_t waiting() const { return waiting_.load(std::memory_order_acquire); }

 private:
  struct Client {
    Stream* stream = nullptr;
    // Set to 1 by the releaser that hands this client the turn; reset by the client.
    alignas(64) std::atomic<std::uint32_t> granted{0};
    std::atomic<std::int64_t> granted_at_ns{0};  // written before `granted`
    BurstKind waiting_kind = BurstKind::decode;  // guarded by mu_
    std::thread::id waiting_thread;              // guarded by mu_
    std::atomic<int> priority{0};
    std::atomic<std::int64_t> asked_at_ns{0};    // its last acquire: is it active?
    std::atomic<bool> in_line{false};            // waiting now, however long since it asked
    std::int64_t in_line_since_ns = 0;           // guarded by mu_
  };
  // A waiter's place in line: higher goes first, equals in arrival order.
  int rank(const Client& client, BurstKind kind) const;

  void enqueue_locked(TurnClientId client, BurstKind kind);
  void wait_for_grant(Client& client) const;
  // Gives the turn to the first waiter (or to one starved past starved_after), or frees it.
  void pass_turn();
  // Under mu_: where in waiters_ the next holder is.
  std::deque<TurnClientId>::iterator next_waiter_locked(std::int64_t now);
  // Holder thread: within a starved waiter's floor slice, which nothing preempts.
  bool in_floor_slice() const;
  // Full release of a depth-1 hold: metrics, drain, pass on.
  std::optional<GpuError> hand_over(TurnClientId client, bool take_errors) noexcept;

  Stream& default_stream_;
  const TurnOptions options_;
  TurnMetrics metrics_;
  std::vector<std::unique_ptr<Client>> clients_;  // fixed once the turn is in use

  std::mutex mu_;
  std::deque<TurnClientId> waiters_;       // guarded by mu_; empty whenever holder_ is
  std::optional<TurnClientId> holder_;     // guarded by mu_
  std::thread::id holder_thread_;          // guarded by mu_
  std::atomic<std::uint32_t> waiting_{0};  // waiters_.size(), read without mu_ at yield points

  // Written while granting (under mu_) and then only by the holder thread.
  BurstKind holder_kind_ = BurstKind::decode;
  int depth_ = 0;
  std::int64_t hold_start_ns_ = 0;
  // The end of the present holder's floor slice (0: none); read by piece_budget_ms.
  std::atomic<std::int64_t> floor_until_ns_{0};
};

}  // namespace baton
