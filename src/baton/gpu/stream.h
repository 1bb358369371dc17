// Stream: an in-order queue of device work, owned by one engine thread.
//
// Work is encoded op by op into an open command buffer, which is committed (handed to
// the device) when it reaches CommitLimits (ops or bytes) or at an explicit commit().
// Committed buffers execute asynchronously and in order; each commit and completion is
// timestamped, and the busy/idle transitions go to a StreamObserver (the overlap meter).
// The first error of any buffer is kept; later buffers are skipped but still completed,
// so a failure never turns into a second hang; the error is raised at the next
// synchronize() (or taken by whoever drains the stream). A hung stream makes no progress
// until reset() (the watchdog's in-place recovery) fails its work and lets it go on.
//
// Thread-safety: encode(), commit() and synchronize() belong to the owning thread.
// wait_idle(), take_error(), drain(), reset(), stats(), id() and name() are safe from
// any thread. Backends implement submit(); complete() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "baton/gpu/command_buffer.h"
#include "baton/gpu/commit_limits.h"
#include "baton/gpu/gpu_error.h"
#include "baton/gpu/stream_observer.h"

namespace baton {

struct StreamStats {
  std::size_t in_flight = 0;    // committed, not yet completed
  std::uint64_t oldest_id = 0;  // the oldest in-flight buffer; 0 when idle
  double oldest_age_s = 0.0;    // age of the oldest in-flight buffer; 0 when idle
  // While busy: time since the stream last made progress (the later of the oldest
  // buffer's commit and the last completion); 0 when idle. What the watchdog reads.
  double no_progress_s = 0.0;
  // While an injected hang holds the stream: when it began (for measurements only).
  std::optional<TimePoint> stalled_since;
  std::uint64_t resets = 0;
  std::uint64_t committed = 0;  // buffers committed so far
  std::uint64_t completed = 0;
  std::uint64_t ops_committed = 0;
  std::int64_t device_ns = 0;  // device_ns() as of `completed`
  std::optional<TimePoint> last_commit;
  std::optional<TimePoint> last_completion;
};

class Stream {
 public:
  // `observer` and `faults` may be null and must outlive the stream.
  Stream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
         FaultHooks* faults);
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamId id() const noexcept { return id_; }
  const std::string& name() const noexcept { return name_; }
  const CommitLimits& limits() const noexcept { return limits_; }

  // Owner thread. Appends `op` to the open buffer; commits when a cap is reached.
  void encode(Op op);
  // Owner thread. Commits the open buffer if it holds any op.
  void commit();
  // Owner thread. Commits, waits for all committed work, throws the first GpuError.
  void synchronize();

  // Any thread. Waits until every committed buffer has completed; errors stay pending.
  void wait_idle();
  // Any thread. Waits until at most `buffers` committed buffers are still in flight;
  // errors stay pending. Spins for up to `spin` before it sleeps: a thread that must act
  // the moment the device is done (the GPU turn's hand-over) saves a wake-up (~10 us).
  void wait_in_flight(std::size_t buffers, std::chrono::nanoseconds spin = {});
  // Any thread. Returns and clears the first unconsumed error.
  [[nodiscard]] std::optional<GpuError> take_error();
  // Any thread. Waits for committed work, then throws the first unconsumed error.
  void drain();
  // Any thread. In-place recovery: fails the stream's in-flight work with `error` (unless
  // an error is pending already), releases a hung buffer, and returns at once. The
  // stream serves new work once the owner has taken the error.
  void reset(GpuError error);
  // Any thread. As reset(), but only while `buffer_id` is still the oldest in flight; runs
  // `before` under the stream's lock first (so what it records exists before anyone can
  // see the error). Returns false, doing nothing, when that buffer has completed.
  bool reset_if_oldest(std::uint64_t buffer_id, GpuError error,
                       const std::function<void()>& before);
  StreamStats stats(TimePoint now = Clock::now()) const;
  // Any thread. The device time the stream's completed buffers took, in ns: each buffer
  // from the later of its commit and the previous completion to its own completion (a
  // stream runs its buffers in order, so these never overlap). What the fair share of the
  // GPU turn charges an engine.
  std::int64_t device_ns() const noexcept { return device_ns_.load(std::memory_order_acquire); }

 protected:
  // Backend: execute `buffer` asynchronously after every earlier one, then complete().
  virtual void submit(CommandBuffer buffer) = 0;
  // Backend: buffer `buffer_id` (always the oldest in flight) has finished.
  void complete(std::uint64_t buffer_id, std::optional<GpuError> error);
  // True while an error is pending: a backend skips the ops of later buffers.
  bool failed() const;
  // For backends that run ops on the host: runs `buffer`'s ops in order with the fault
  // hooks applied (hangs, slowdowns, injected failures) and maps exceptions to GpuError.
  // Returns the buffer's own error, if any. Call from the executor, then complete().
  std::optional<GpuError> run_ops(CommandBuffer& buffer);
  // Backend destructors: releases a hung buffer and keeps later ones from hanging.
  void close();
  // Backends whose hangs run on the device: called by reset(), under the stream's lock,
  // to release a hung buffer. Must not call back into the Stream.
  virtual void release_hang() {}
  // Backends whose hangs run on the device: a hang began now (for detection latency).
  void note_stall_began();
  // False while the stream is stalled or holds an error: no new hang can land on it.
  bool accepts_hang() const;
  FaultHooks* fault_hooks() const noexcept { return faults_; }

 private:
  struct InFlight {
    std::uint64_t id;
    TimePoint committed_at;
  };

  const StreamId id_;
  const std::string name_;
  // Blocks the executor like a hung GPU queue until reset(); returns after the reset.
  void stall();
  // The body of both resets; mu_ must be held.
  void reset_locked(GpuError error);

  const CommitLimits limits_;
  StreamObserver* const observer_;  // may be null
  FaultHooks* const faults_;        // may be null

  CommandBuffer open_;             // owner thread only
  std::uint64_t next_buffer_ = 1;  // owner thread only

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::condition_variable reset_cv_;
  std::uint64_t resets_ = 0;                  // guarded by mu_
  bool closed_ = false;                       // guarded by mu_
  std::optional<TimePoint> stalled_since_;    // guarded by mu_
  std::deque<InFlight> in_flight_;            // guarded by mu_
  std::atomic<std::size_t> in_flight_count_{0};  // in_flight_.size(), written under mu_
  std::optional<GpuError> error_;             // guarded by mu_
  std::uint64_t committed_ = 0;               // guarded by mu_
  std::uint64_t completed_ = 0;               // guarded by mu_
  std::uint64_t ops_committed_ = 0;           // guarded by mu_
  std::optional<TimePoint> last_commit_;      // guarded by mu_
  std::optional<TimePoint> last_completion_;  // guarded by mu_
  std::atomic<std::int64_t> device_ns_{0};    // written under mu_
};

}  // namespace baton
