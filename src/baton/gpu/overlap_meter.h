// OverlapMeter: total time during which two or more streams had work in flight at once.
// This is the exposure the mission is about; under the `serialize` turn it must read 0.
// Streams report busy/idle transitions under their own locks, after a commit is recorded
// and before a completion is signalled, so the meter's view contains the real one.
// Thread-safety: all members are thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <mutex>

#include "baton/gpu/stream_observer.h"

namespace baton {

struct OverlapReading {
  double overlap_s = 0.0;      // time with >= 2 streams busy, including an open episode
  std::uint64_t episodes = 0;  // times the busy count rose from 1 to 2
  std::uint32_t max_busy = 0;  // most streams busy at once
  std::uint32_t busy_now = 0;
};

class OverlapMeter final : public StreamObserver {
 public:
  void stream_busy(StreamId stream, TimePoint at) override;
  void stream_idle(StreamId stream, TimePoint at) override;

  // A consistent reading as of `now` (an open overlap episode counts up to `now`).
  OverlapReading read(TimePoint now = Clock::now()) const;

 private:
  mutable std::mutex mu_;
  std::uint32_t busy_ = 0;            // guarded by mu_
  std::uint32_t max_busy_ = 0;        // guarded by mu_
  std::uint64_t episodes_ = 0;        // guarded by mu_
  TimePoint episode_start_{};         // guarded by mu_; valid while busy_ >= 2
  Clock::duration closed_overlap_{};  // guarded by mu_
};

}  // namespace baton
