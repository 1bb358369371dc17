#include "baton/turn/host_overlap.h"

#include <algorithm>
#include <chrono>

#include "baton/common/clock.h"
#include "baton/turn/host_shared_state.h"

namespace baton {
namespace {

std::int64_t ns_of(TimePoint at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

// Overlap time up to `at_ns`, an open episode included.
std::int64_t overlap_ns_locked(const HostOverlapCounters& o, std::int64_t at_ns) {
  if (o.busy < 2) return o.closed_ns;
  return o.closed_ns + std::max<std::int64_t>(at_ns - o.episode_start_ns, 0);
}

}  // namespace

HostOverlapMeter::HostOverlapMeter(std::shared_ptr<HostSegment> segment)
    : segment_(std::move(segment)) {
  HostSegment::Lock lock(*segment_);
  HostSharedState& s = lock.state();
  base_overlap_ns_ = overlap_ns_locked(s.overlap, now_ns());
  base_episodes_ = s.overlap.episodes;
  s.processes[segment_->self()].max_busy_seen = s.overlap.busy;
}

void HostOverlapMeter::stream_busy(StreamId /*stream*/, TimePoint at) {
  HostSegment::Lock lock(*segment_);
  HostSharedState& s = lock.state();
  ++s.processes[segment_->self()].busy_streams;
  add_busy_locked(s, 1, ns_of(at));
}

void HostOverlapMeter::stream_idle(StreamId /*stream*/, TimePoint at) {
  HostSegment::Lock lock(*segment_);
  HostSharedState& s = lock.state();
  std::uint32_t& mine = s.processes[segment_->self()].busy_streams;
  if (mine == 0) return;  // not counted (reaped, or busy before this meter was added)
  --mine;
  remove_busy_locked(s, 1, ns_of(at));
}

OverlapReading HostOverlapMeter::read(TimePoint now) const {
  HostSegment::Lock lock(*segment_);
  const HostSharedState& s = lock.state();
  OverlapReading r;
  const std::int64_t total = overlap_ns_locked(s.overlap, ns_of(now)) - base_overlap_ns_;
  r.overlap_s = static_cast<double>(std::max<std::int64_t>(total, 0)) * 1e-9;
  r.episodes = s.overlap.episodes - base_episodes_;
  r.max_busy = s.processes[segment_->self()].max_busy_seen;
  r.busy_now = s.overlap.busy;
  return r;
}

std::uint32_t HostOverlapMeter::busy_here() const {
  HostSegment::Lock lock(*segment_);
  return lock.state().processes[segment_->self()].busy_streams;
}

}  // namespace baton
