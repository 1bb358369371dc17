// DualEngineClock: how long two or more engines had requests in progress at once (the
// exposure MISSION.md counts at the engine level, beside the streams' overlap), as the
// server sees its requests begin and end.
// Thread-safety: all members are thread-safe (one mutex).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "baton/common/clock.h"

namespace baton {

class DualEngineClock {
 public:
  void begin(const std::string& engine, TimePoint now = Clock::now());
  void end(const std::string& engine, TimePoint now = Clock::now());
  // Seconds with >= 2 engines busy, an open stretch counted up to `now`.
  double dual_seconds(TimePoint now = Clock::now()) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> in_progress_;  // guarded by mu_; engines with requests > 0
  int busy_engines_ = 0;                    // guarded by mu_
  TimePoint dual_since_{};                  // guarded by mu_; valid while busy_engines_ >= 2
  double closed_s_ = 0.0;                   // guarded by mu_
};

}  // namespace baton
