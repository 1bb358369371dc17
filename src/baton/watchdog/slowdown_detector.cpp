#include "baton/watchdog/slowdown_detector.h"

#include "baton/common/context_bucket.h"
#include "baton/common/percentiles.h"

namespace baton {

SlowdownDetector::SlowdownDetector(double factor, std::chrono::milliseconds min_excess,
                                   FaultLog& log, ActivityProbe probe)
    : factor_(factor),
      min_excess_s_(std::chrono::duration<double>(min_excess).count()),
      log_(log),
      probe_(std::move(probe)) {}

void SlowdownDetector::burst_done(const BurstRecord& burst) {
  if (!burst.ok) return;  // a failed burst is a fault of its own, not a slow one
  const double seconds = seconds_between(burst.granted, burst.done);
  double median = 0.0;
  {
    std::lock_guard lock(mu_);
    auto& window = windows_[Key{burst.engine, burst.kind, context_bucket(burst.context_tokens)}];
    if (window.size() >= kMinSamples) {
      median = percentile(std::vector<double>(window.begin(), window.end()), 0.5);
    }
    window.push_back(seconds);
    if (window.size() > kWindow) window.pop_front();
  }
  if (median <= 0.0 || seconds <= factor_ * median || seconds - median < min_excess_s_) return;
  FaultEvent event;
  event.wall_time = std::chrono::system_clock::now();
  event.time = burst.done;
  event.onset = burst.granted;
  event.kind = FaultKind::slowdown;
  event.engine = burst.engine;
  if (probe_) event.engines = probe_();
  event.detail = std::string(to_string(burst.kind)) + " burst took " +
                 std::to_string(seconds * 1e3) + " ms, " + std::to_string(seconds / median) +
                 "x its rolling median of " + std::to_string(median * 1e3) + " ms";
  log_.record(std::move(event));
}

}  // namespace baton
