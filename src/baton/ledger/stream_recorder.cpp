#include "baton/ledger/stream_recorder.h"

#include <algorithm>

namespace baton {

StreamRecorder::StreamRecorder(Ledger& ledger, std::int64_t run_id, WallReference wall)
    : ledger_(ledger), run_id_(run_id), wall_(wall) {}

void StreamRecorder::name_stream(StreamId id, std::string name) {
  std::lock_guard lock(mu_);
  names_[id] = std::move(name);
}

void StreamRecorder::stream_busy(StreamId stream, TimePoint at) {
  std::lock_guard lock(mu_);
  TimePoint start = at;
  if (held_) {
    // No stream was busy since the held stretch ended (the first busy stream lets go of
    // it): joining it adds no dual time.
    const double gap = seconds_between(held_->end, at);
    if (held_->stream == stream && gap >= 0.0 && gap <= Ledger::kMergeGapSeconds) {
      start = held_->start;
    } else {
      record(*held_);
    }
    held_.reset();
  }
  busy_[stream] = start;
}

void StreamRecorder::stream_idle(StreamId stream, TimePoint at) {
  std::lock_guard lock(mu_);
  const auto it = busy_.find(stream);
  if (it == busy_.end()) return;  // never seen busy: nothing to end
  const Stretch stretch{.stream = stream, .start = it->second, .end = at};
  busy_.erase(it);
  if (busy_.empty()) {
    held_ = stretch;  // the device is idle now: the stream may go on in a moment
  } else {
    record(stretch);
  }
}

void StreamRecorder::finish() {
  std::lock_guard lock(mu_);
  if (held_) record(*held_);
  held_.reset();
  const TimePoint now = Clock::now();
  for (const auto& [stream, since] : busy_) record({stream, since, now});
  busy_.clear();
}

void StreamRecorder::set_run(std::int64_t run_id, TimePoint at) {
  std::lock_guard lock(mu_);
  if (held_) record(*held_);
  held_.reset();
  for (auto& [stream, since] : busy_) {
    if (since < at) record({stream, since, at});
    since = std::max(since, at);
  }
  run_id_ = run_id;
}

void StreamRecorder::record(const Stretch& stretch) {
  const auto name = names_.find(stretch.stream);
  ledger_.record(StreamIntervalRow{
      .run_id = run_id_,
      .stream = name != names_.end() ? name->second : "stream-" + std::to_string(stretch.stream),
      .start = wall_.unix_seconds(stretch.start),
      .end = wall_.unix_seconds(stretch.end)});
}

}  // namespace baton
