#include "baton/gpu/overlap_meter.h"

#include <algorithm>
#include <cassert>

namespace baton {

void OverlapMeter::stream_busy(StreamId /*stream*/, TimePoint at) {
  std::lock_guard lock(mu_);
  ++busy_;
  max_busy_ = std::max(max_busy_, busy_);
  if (busy_ == 2) {
    episode_start_ = at;
    ++episodes_;
  }
}

void OverlapMeter::stream_idle(StreamId /*stream*/, TimePoint at) {
  std::lock_guard lock(mu_);
  assert(busy_ > 0 && "stream_idle without stream_busy");
  if (busy_ == 2) closed_overlap_ += std::max(at - episode_start_, Clock::duration::zero());
  --busy_;
}

OverlapReading OverlapMeter::read(TimePoint now) const {
  std::lock_guard lock(mu_);
  OverlapReading r;
  Clock::duration total = closed_overlap_;
  if (busy_ >= 2) total += std::max(now - episode_start_, Clock::duration::zero());
  r.overlap_s = std::chrono::duration<double>(total).count();
  r.episodes = episodes_;
  r.max_busy = max_busy_;
  r.busy_now = busy_;
  return r;
}

}  // namespace baton
