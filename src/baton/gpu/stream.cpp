#include "baton/gpu/stream.h"

#include <cassert>
#include <thread>
#include <utility>

#include "baton/common/cpu_relax.h"

namespace baton {

Stream::Stream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer,
               FaultHooks* faults)
    : id_(id), name_(std::move(name)), limits_(limits), observer_(observer), faults_(faults) {}

void Stream::encode(Op op) {
  open_.bytes += op.bytes;
  open_.ops.push_back(std::move(op));
  if (open_.ops.size() >= limits_.max_ops || open_.bytes >= limits_.max_bytes) commit();
}

void Stream::commit() {
  if (open_.ops.empty()) return;
  CommandBuffer buffer = std::exchange(open_, CommandBuffer{});
  buffer.id = next_buffer_++;
  if (faults_ != nullptr) buffer.fault = faults_->on_commit(id_);
  {
    std::lock_guard lock(mu_);
    buffer.committed_at = Clock::now();  // under the lock: observers see times in order
    // Recorded as in flight before the device can start it, so observers never miss work.
    if (in_flight_.empty() && observer_ != nullptr)
      observer_->stream_busy(id_, buffer.committed_at);
    in_flight_.push_back({buffer.id, buffer.committed_at});
    in_flight_count_.store(in_flight_.size(), std::memory_order_release);
    ++committed_;
    ops_committed_ += buffer.ops.size();
    last_commit_ = buffer.committed_at;
  }
  submit(std::move(buffer));
}

void Stream::synchronize() {
  commit();
  drain();
}

void Stream::wait_idle() { wait_in_flight(0); }

void Stream::wait_in_flight(std::size_t buffers, std::chrono::nanoseconds spin) {
  if (spin.count() > 0) {
    const TimePoint until = Clock::now() + spin;
    while (in_flight_count_.load(std::memory_order_acquire) > buffers) {
      if (Clock::now() >= until) break;
      cpu_relax();
    }
  }
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return in_flight_.size() <= buffers; });
}

std::optional<GpuError> Stream::take_error() {
  std::lock_guard lock(mu_);
  return std::exchange(error_, std::nullopt);
}

void Stream::drain() {
  wait_idle();
  if (auto error = take_error()) throw *error;
}

StreamStats Stream::stats(TimePoint now) const {
  std::lock_guard lock(mu_);
  StreamStats s;
  s.in_flight = in_flight_.size();
  if (!in_flight_.empty()) {
    const TimePoint committed = in_flight_.front().committed_at;
    s.oldest_id = in_flight_.front().id;
    s.oldest_age_s = seconds_between(committed, now);
    const TimePoint progress =
        last_completion_ && *last_completion_ > committed ? *last_completion_ : committed;
    s.no_progress_s = seconds_between(progress, now);
  }
  s.stalled_since = stalled_since_;
  s.resets = resets_;
  s.committed = committed_;
  s.completed = completed_;
  s.ops_committed = ops_committed_;
  s.device_ns = device_ns_.load(std::memory_order_relaxed);
  s.last_commit = last_commit_;
  s.last_completion = last_completion_;
  return s;
}

void Stream::complete(std::uint64_t buffer_id, std::optional<GpuError> error) {
  {
    std::lock_guard lock(mu_);
    assert(!in_flight_.empty() && in_flight_.front().id == buffer_id && "out-of-order completion");
    (void)buffer_id;
    const TimePoint now = Clock::now();
    const TimePoint began = last_completion_ && *last_completion_ > in_flight_.front().committed_at
                                ? *last_completion_
                                : in_flight_.front().committed_at;
    device_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - began).count(),
                         std::memory_order_release);
    in_flight_.pop_front();
    in_flight_count_.store(in_flight_.size(), std::memory_order_release);
    ++completed_;
    last_completion_ = now;
    if (error) {
      if (observer_ != nullptr) observer_->buffer_failed(id_, *error, now);
      if (!error_) error_ = std::move(error);
    }
    // Reported idle before any waiter wakes, so a drained stream is idle in the meter too.
    if (in_flight_.empty() && observer_ != nullptr) observer_->stream_idle(id_, now);
    // Under the lock: a woken owner may destroy the stream right away.
    idle_cv_.notify_all();
  }
}

bool Stream::failed() const {
  std::lock_guard lock(mu_);
  return error_.has_value();
}

void Stream::reset(GpuError error) {
  std::lock_guard lock(mu_);
  reset_locked(std::move(error));
}

void Stream::reset_locked(GpuError error) {
  if (!error_) error_ = std::move(error);
  ++resets_;
  stalled_since_.reset();
  release_hang();
  reset_cv_.notify_all();
}

bool Stream::accepts_hang() const {
  std::lock_guard lock(mu_);
  return !error_ && !stalled_since_;
}

void Stream::note_stall_began() {
  std::lock_guard lock(mu_);
  stalled_since_ = Clock::now();
}

bool Stream::reset_if_oldest(std::uint64_t buffer_id, GpuError error,
                             const std::function<void()>& before) {
  std::lock_guard lock(mu_);
  if (in_flight_.empty() || in_flight_.front().id != buffer_id) return false;
  before();
  reset_locked(std::move(error));
  return true;
}

void Stream::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  reset_cv_.notify_all();
}

void Stream::stall() {
  std::unique_lock lock(mu_);
  stalled_since_ = Clock::now();
  // Waits for the error a reset (or close) puts on the stream, not for a reset count: a
  // reset that came between the executor's last check and this wait is not lost. The
  // error cannot be taken while this buffer is in flight.
  reset_cv_.wait(lock, [this] { return error_.has_value() || closed_; });
  // A hung buffer released by close() failed all the same: it did not complete its work.
  if (!error_) error_ = GpuError(GpuErrorClass::other, "stream " + name_, "closed while hung");
  stalled_since_.reset();
}

std::optional<GpuError> Stream::run_ops(CommandBuffer& buffer) {
  auto origin = [this] { return "stream " + name_; };
  auto hang = [this] {
    faults_->realized(id_, BufferFault::hang);
    stall();
    return std::nullopt;  // the reset put its error on the stream
  };
  switch (buffer.fault) {
    case BufferFault::none:
      break;
    case BufferFault::hang:
      return failed() ? std::nullopt : hang();
    case BufferFault::timeout:
      faults_->realized(id_, BufferFault::timeout);
      return GpuError(GpuErrorClass::timeout, origin(),
                      "injected: buffer " + std::to_string(buffer.id) + " timed out");
    case BufferFault::submissions_ignored:
      faults_->realized(id_, BufferFault::submissions_ignored);
      return GpuError(GpuErrorClass::submissions_ignored, origin(),
                      "injected: the device ignores submissions");
    case BufferFault::device_fault:
      // Host-run ops have no device memory to fault; the stream fails as a sticky error does.
      faults_->realized(id_, BufferFault::device_fault);
      return GpuError(GpuErrorClass::submissions_ignored, origin(),
                      "injected: a device fault (the context can no longer be used)");
  }
  try {
    for (Op& op : buffer.ops) {
      if (failed()) return std::nullopt;  // skipped after an earlier error or a reset
      if (faults_ != nullptr && faults_->stall_now(id_)) return hang();
      const TimePoint start = Clock::now();
      op.run();
      if (faults_ != nullptr) {
        const TimePoint end = Clock::now();
        const double factor = faults_->slowdown(id_, end);
        if (factor > 1.0) std::this_thread::sleep_for((end - start) * (factor - 1.0));
      }
    }
  } catch (const GpuError& error) {
    return error;
  } catch (const std::exception& error) {
    return GpuError(GpuErrorClass::other, origin(), error.what());
  }
  return std::nullopt;
}

}  // namespace baton
