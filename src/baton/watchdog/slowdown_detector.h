// SlowdownDetector: a burst far slower than the rolling median of the same engine, kind
// and context-length bucket is a slowdown (the tenfold slowdowns that came before hangs
// in MISSION.md). Burst time is from getting the turn to completion, so waiting for the
// turn is not a slowdown; sharing the device with a concurrent stream is. A slowdown must
// also exceed the median by `min_excess`, so scheduling noise on tiny bursts is not one.
// Thread-safety: burst_done() is thread-safe (one mutex).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "baton/turn/burst_observer.h"
#include "baton/watchdog/fault_log.h"

namespace baton {

class SlowdownDetector final : public BurstObserver {
 public:
  using ActivityProbe = std::function<std::vector<EngineActivity>()>;
  static constexpr std::size_t kWindow = 64;      // bursts in the rolling median
  static constexpr std::size_t kMinSamples = 16;  // no verdict before this many

  SlowdownDetector(double factor, std::chrono::milliseconds min_excess, FaultLog& log,
                   ActivityProbe probe);
  void burst_done(const BurstRecord& burst) override;

 private:
  using Key = std::tuple<std::string, BurstKind, std::size_t>;

  const double factor_;
  const double min_excess_s_;
  FaultLog& log_;
  ActivityProbe probe_;
  std::mutex mu_;
  std::map<Key, std::deque<double>> windows_;  // guarded by mu_
};

}  // namespace baton
