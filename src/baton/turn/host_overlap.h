// HostOverlapMeter: the overlap meter of every baton process that shares a host segment
// (host_segment.h): how long two or more streams of the machine, in any of those
// processes, had work in flight at once. Each process adds one as an observer of its
// device; it publishes that process's busy/idle transitions into the segment, and read()
// gives the host-wide reading since the meter was made (as a device's own meter counts
// from the device's start). Times are steady-clock (CLOCK_MONOTONIC) nanoseconds, one
// clock for every process. A process reaped as dead stops counting its busy streams.
// One meter per HostSegment attachment (its max_busy lives in the attachment's entry).
// Thread-safety: all members are thread-safe (the segment mutex, held briefly). Streams
// call stream_busy/stream_idle under their own locks; the meter never calls into a stream.
#pragma once

#include <cstdint>
#include <memory>

#include "baton/gpu/overlap_meter.h"
#include "baton/gpu/stream_observer.h"
#include "baton/turn/host_segment.h"

namespace baton {

class HostOverlapMeter final : public StreamObserver {
 public:
  explicit HostOverlapMeter(std::shared_ptr<HostSegment> segment);

  void stream_busy(StreamId stream, TimePoint at) override;
  void stream_idle(StreamId stream, TimePoint at) override;

  // The host-wide reading from this meter's construction to `now` (an open overlap
  // episode counts up to `now`).
  OverlapReading read(TimePoint now = Clock::now()) const;
  // This process's streams busy now.
  std::uint32_t busy_here() const;

 private:
  std::shared_ptr<HostSegment> segment_;
  // The host-wide counters when the meter was made, taken off every reading.
  std::int64_t base_overlap_ns_ = 0;
  std::uint64_t base_episodes_ = 0;
};

// Under the segment mutex: `count` more streams busy (or no longer busy) as of `at_ns`.
}  // namespace baton
