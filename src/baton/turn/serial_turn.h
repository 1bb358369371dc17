// SerialTurn: the `serialize` policy. One holder at a time, re-entrant on the holding
// thread; before the turn passes on, the holder drains its own stream and the default
// stream, so no two streams ever have work in flight at once.
//
// Who goes next is the weighted fair share of fair_share.h: the waiter of least virtual
// time (device time granted over weight; ties in arrival order, decode bursts first with
// decode_first), and under the op quantum a holder hands over at its next yield point once
// a waiter is owed the turn, so a waiter that is owed waits for at most one piece of
// another engine's work; while an engine owed the turn is between two steps, the
// holder's pieces are cut to what keeps the weights if it comes straight back. Device time
// is what the holder's stream and the default stream report (Stream::device_ns) over the
// hold.
//
// Hand-over is explicit: the releaser picks the next waiter under the one mutex and
// sets that waiter's own flag. A waiter spins on its flag for TurnOptions::spin, then
// parks on it (futex), so a hand-over to a spinning waiter costs well under a
// microsecond and nobody burns a core through a long wait. With a handover_spin, a holder
// about to hand over first warns the waiter likely to be next, which then spins through
// the holder's drain, and the holder spins for its drain too: the device waits for no
// wake-up between two holders.
//
// Thread-safety: see GpuTurn. One mutex (mu_) guards the holder, the line of waiters and
// the share accounts.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/turn/fair_share.h"
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
  std::chrono::nanoseconds yield_point(TurnClientId client, Boundary boundary) override;
  std::optional<double> piece_budget_ms(TurnClientId client, BurstKind kind) const override;
  void set_weight(TurnClientId client, double weight) override;
  TurnStats stats() const override { return metrics_.snapshot(); }
  // Clients waiting in line right now (a momentary reading).
  std::size_t waiting() const { return waiting_.load(std::memory_order_acquire); }

 private:
  static constexpr std::uint32_t kWaiting = 0;
  static constexpr std::uint32_t kGranted = 1;
  static constexpr std::uint32_t kWarned = 2;

  struct Client {
    Stream* stream = nullptr;
    // kGranted from the releaser that hands this client the turn, kWarned from a holder
    // about to hand over; reset to kWaiting by the client.
    alignas(64) std::atomic<std::uint32_t> granted{kWaiting};
    std::atomic<std::int64_t> granted_at_ns{0};  // written before `granted`
    BurstKind waiting_kind = BurstKind::decode;  // guarded by mu_
    std::thread::id waiting_thread;              // guarded by mu_
    std::atomic<std::int64_t> asked_at_ns{0};    // its last acquire: is it active?
    std::atomic<bool> in_line{false};            // waiting now, however long since it asked
    ShareAccount account;                        // guarded by mu_
    bool wanting = false;  // guarded by mu_: holding or in line, yields included
    // Guarded by mu_: when it last stopped wanting (fair_share.h's rejoin grace); a client
    // that never asked is away for good.
    std::int64_t left_at_ns = std::numeric_limits<std::int64_t>::min() / 2;
    // Guarded by mu_: device time granted since it last began wanting, and in its last
    // stretch of wanting (fair_share.h's owed_piece_ms).
    std::int64_t stretch_device_ns = 0;
    std::int64_t last_stretch_device_ns = 0;
  };
  // Under mu_: where in waiters_ the next holder is (least virtual time, then decode first
  // with decode_first, then arrival).
  std::deque<TurnClientId>::iterator next_waiter_locked();
  // Under mu_: the least virtual time of the engines that want the device now, the holder's
  // running hold counted in; raises and returns floor_ns_.
  double floor_locked();
  // The holder's piece budget while others are active: max_hold_ms, cut to owed_piece_ms
  // of each engine that is owed the turn, between two steps or in line.
  double owed_budget_ms(TurnClientId holder) const;
  // Device time the holder has used since its grant (its stream and the default stream).
  std::int64_t running_device_ns(const Client& holder) const;

  void enqueue_locked(TurnClientId client, BurstKind kind);
  // Spins for TurnOptions::spin (`warned`: for the handover_spin too), then parks; a
  // warning on the flag starts a handover_spin.
  void wait_for_grant(Client& client, bool warned) const;
  // Holder, before its drain: with a handover_spin, wakes the waiter that would be next
  // now, so that it spins through the drain, and marks the drain under way for waiters
  // still to come.
  void warn_next_waiter();
  // Charges the releaser its hold's device time, then gives the turn to the next waiter or
  // frees it; `leaving`: the releaser wants no more.
  void pass_turn(TurnClientId releaser, bool leaving, std::int64_t device_ns);
  // Full release of a depth-1 hold: metrics, drain, charge, pass on.
  // Drains, then passes the turn on; `passed_at_ns`, when given, gets the moment it passed.
  std::optional<GpuError> hand_over(TurnClientId client, bool take_errors, bool leaving,
                                    std::int64_t* passed_at_ns = nullptr) noexcept;

  Stream& default_stream_;
  const TurnOptions options_;
  TurnMetrics metrics_;
  std::vector<std::unique_ptr<Client>> clients_;  // fixed once the turn is in use

  mutable std::mutex mu_;
  std::deque<TurnClientId> waiters_;       // guarded by mu_; empty whenever holder_ is
  std::optional<TurnClientId> holder_;     // guarded by mu_
  std::thread::id holder_thread_;          // guarded by mu_
  std::atomic<std::uint32_t> waiting_{0};  // waiters_.size(), read without mu_ at yield points
  // With a handover_spin: the holder is draining to hand over (set before the drain,
  // cleared under mu_ as the turn passes); a waiter coming in line alone meanwhile spins.
  std::atomic<bool> draining_{false};

  double floor_ns_ = 0.0;  // guarded by mu_; only ever rises

  // Written while granting (under mu_) and then only by the holder thread.
  BurstKind holder_kind_ = BurstKind::decode;
  int depth_ = 0;
  std::int64_t hold_start_ns_ = 0;
  // Device time of the holder's stream and the default stream at its grant; written under
  // mu_ while granting, read by floor_locked() under mu_ and by the holder.
  std::int64_t device_at_grant_ns_ = 0;
};

}  // namespace baton
