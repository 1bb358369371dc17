#include "baton/gpu/stream.h"

#include <cassert>
#include <utility>

namespace baton {

Stream::Stream(StreamId id, std::string name, CommitLimits limits, StreamObserver* observer)
    : id_(id), name_(std::move(name)), limits_(limits), observer_(observer) {}

void Stream::encode(Op op) {
  open_.bytes += op.bytes;
  open_.ops.push_back(std::move(op));
  if (open_.ops.size() >= limits_.max_ops || open_.bytes >= limits_.max_bytes) commit();
}

void Stream::commit() {
  if (open_.ops.empty()) return;
  CommandBuffer buffer = std::exchange(open_, CommandBuffer{});
  buffer.id = next_buffer_++;
  buffer.committed_at = Clock::now();
  {
    std::lock_guard lock(mu_);
    // Recorded as in flight before the device can start it, so observers never miss work.
    if (in_flight_.empty() && observer_ != nullptr) observer_->stream_busy(id_, buffer.committed_at);
    in_flight_.push_back({buffer.id, buffer.committed_at});
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

void Stream::wait_idle() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [this] { return in_flight_.empty(); });
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
  if (!in_flight_.empty()) s.oldest_age_s = seconds_between(in_flight_.front().committed_at, now);
  s.committed = committed_;
  s.completed = completed_;
  s.ops_committed = ops_committed_;
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
    in_flight_.pop_front();
    ++completed_;
    last_completion_ = now;
    if (error && !error_) error_ = std::move(error);
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

}  // namespace baton
