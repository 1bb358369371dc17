// HostTurn: the `serialize` policy for every baton process of the machine that uses the
// same turn name (--turn-scope host). Its semantics are SerialTurn's: one holder at a
// time, the weighted fair share of device time (fair_share.h; each slot's weight and
// virtual time live in the segment), re-entrant on the holding thread, the holder drains its own
// stream and this process's default stream before the turn passes on, and a prefill chunk yields at
// its quantum. The holder and the line of waiters live in a HostSegment (/dev/shm/baton-turn-NAME),
// so engines of several processes take turns exactly as the engines of one process do.
//
// Hand-over: the releaser picks the waiter of least virtual time under the segment mutex and sets
// that waiter's grant word in the segment. The waiter spins on it for TurnOptions::spin, then
// sleeps on it as a shared futex, waking at least every TurnOptions::liveness_poll to
// check that the holder's process is alive.
//
// Death: a holder whose process dies (even by SIGKILL) blocks the others for at most
// liveness_poll plus one hand-over (20 ms by default, plus a /proc read and a wake): the
// first waiter to notice reaps the process (its client slots, its waiters, its busy
// streams) and the turn passes to the first waiter. A waiter whose process dies is taken
// out of the line by the next full scan (every 25 polls of any waiter), or reaped as a
// holder when the turn reaches it first.
//
// Each process applies its own decode_first when it queues; give every process the same.
// Thread-safety: see GpuTurn. stats() counts this process's clients only; waiting() is
// host-wide.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "baton/turn/gpu_turn.h"
#include "baton/turn/host_segment.h"
#include "baton/turn/serial_steps.h"
#include "baton/turn/turn_options.h"

namespace baton {

class HostTurn final : public GpuTurn {
 public:
  // Shares `segment` when given, else attaches to the one of options.host_name.
  HostTurn(Stream& default_stream, TurnOptions options,
           std::shared_ptr<HostSegment> segment = nullptr);
  // Frees this process's client slots. No client may hold or wait for the turn.
  ~HostTurn() override;
  HostTurn(const HostTurn&) = delete;
  HostTurn& operator=(const HostTurn&) = delete;

  std::string_view policy_name() const override { return "serialize"; }
  // Takes one of the segment's client slots; throws std::runtime_error when all are taken.
  TurnClientId register_client(std::string name, Stream& stream) override;
  void acquire(TurnClientId client, BurstKind kind) override;
  void release(TurnClientId client) override;
  void release_quietly(TurnClientId client) noexcept override;
  std::chrono::nanoseconds yield_point(TurnClientId client, Boundary boundary) override;
  std::optional<double> piece_budget_ms(TurnClientId client, BurstKind kind) const override;
  void set_weight(TurnClientId client, double weight) override;
  TurnStats stats() const override { return metrics_.snapshot(); }
  // Clients of every process waiting in line right now (a momentary reading).
  std::size_t waiting() const;
  HostSegment& segment() const { return *segment_; }

 private:
  struct Client {
    Stream* stream = nullptr;
    std::int32_t slot = kHostNone;  // in the segment
  };

  // Returns true when the turn was free and is now held; else `client` is in line.
  bool take_or_enqueue(const Client& client, BurstKind kind);
  void wait_for_grant(const Client& client) const;
  // Full release of a depth-1 hold: metrics, drain, charge, pass on; `leaving`: the
  // client wants no more (a yield re-queues it).
  // Drains, then passes the turn on; `passed_at_ns`, when given, gets the moment it passed.
  std::optional<GpuError> hand_over(TurnClientId client, bool take_errors, bool leaving,
                                    std::int64_t* passed_at_ns = nullptr) noexcept;
  // Charges the hold's `device_ns` to the client's slot and passes the turn on.
  void pass_turn(const Client& client, bool leaving, std::int64_t device_ns) noexcept;
  // Holder thread: device time used since the grant (its stream and the default stream).
  std::int64_t running_device_ns(const Client& client) const;

  Stream& default_stream_;
  const TurnOptions options_;
  std::shared_ptr<HostSegment> segment_;
  TurnMetrics metrics_;
  std::vector<Client> clients_;  // fixed once the turn is in use
  ContentionClock contention_;   // as this process's clients saw it

  // The thread of this process that holds the turn, or none. Only that thread ever
  // stores its own id here, so a thread that reads its own id holds the turn.
  std::atomic<std::thread::id> holder_thread_{};
  // Written by the holder thread after it gets the turn; read only by it.
  BurstKind holder_kind_ = BurstKind::decode;
  int depth_ = 0;
  std::int64_t hold_start_ns_ = 0;
  std::int64_t device_at_grant_ns_ = 0;
};

}  // namespace baton
