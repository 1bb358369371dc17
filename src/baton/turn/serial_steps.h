// serial_steps: what the serialize policy does the same way in one process (SerialTurn)
// and across the processes of a host (HostTurn): the drain before a hand-over, the test
// of whether a yield point is a quantum boundary, and the clock of contention.
// Thread-safety: free functions; drain_for_handover() follows Stream's rules (the caller
// holds the turn, so it owns its stream and the default stream).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "baton/common/clock.h"
#include "baton/common/cpu_relax.h"
#include "baton/gpu/gpu_error.h"
#include "baton/gpu/stream.h"
#include "baton/turn/burst_kind.h"
#include "baton/turn/turn_options.h"

namespace baton {

// Commits and drains the holder's stream and the default stream, spinning for up to
// `spin` on each before it sleeps; with `take_errors`, returns the first error they hold
// (one at a time: a second stays pending).
std::optional<GpuError> drain_for_handover(Stream& own, Stream& default_stream, bool take_errors,
                                           std::chrono::nanoseconds spin = {}) noexcept;

// Whether a holder running a `holder_kind` burst hands over at `boundary` (when someone
// waits). Only prefill chunks are split: a decode step is short and latency-bound as it is.
bool is_quantum_boundary(const TurnOptions& options, BurstKind holder_kind, Boundary boundary);
// The holder's wait at the end of a quantum: at most one quantum in flight afterwards, so
// that a waiter waits for one. At a queued_op boundary that is the queued one (the caller
// keeps each piece queued behind the one before); otherwise none (as synchronize: throws
// the stream's first error). Spins for up to `spin` before it sleeps.
void end_quantum(Stream& stream, Boundary boundary, std::chrono::nanoseconds spin = {});

// When the turn last saw two clients want it at once (one waited, or was handed the turn
// by another): the sign that a holder's prefill should come in pieces. Any thread.
class ContentionClock {
 public:
  // Other engines count as active this long after the turn last saw contention: longer
  // than the gap between two decode steps, short enough that an engine left alone soon
  // runs whole layers again.
  static constexpr std::int64_t kRecentNs = 100'000'000;
  void saw_contention() { last_ns_.store(now_ns(), std::memory_order_relaxed); }
  bool recent() const {
    const std::int64_t last = last_ns_.load(std::memory_order_relaxed);
    return last != 0 && now_ns() - last < kRecentNs;
  }

 private:
  std::atomic<std::int64_t> last_ns_{0};
};

// The piece budget of GpuTurn::piece_budget_ms() of the host-wide turn: the options'
// max_hold_ms for any burst at the op quantum while someone waits or contention was
// recent; else none.
std::optional<double> piece_budget(const TurnOptions& options, bool someone_waits,
                                   const ContentionClock& contention);

}  // namespace baton
