// WallReference: one (steady clock, Unix time) pair, taken once, that turns steady-clock
// times into Unix seconds. Lengths and order stay exact even if the wall clock is
// adjusted during a run. Every recorder of one run shares one, so that its engine and
// stream intervals line up to the nanosecond.
// Thread-safety: a value, immutable after construction.
#pragma once

#include <chrono>

#include "baton/common/clock.h"

namespace baton {

class WallReference {
 public:
  // Taken now.
  WallReference()
      : steady_(Clock::now()),
        unix_(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                  .count()) {}

  double unix_seconds(TimePoint t) const { return unix_ + seconds_between(steady_, t); }

 private:
  TimePoint steady_;
  double unix_;
};

}  // namespace baton
