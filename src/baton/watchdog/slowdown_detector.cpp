#include "baton/watchdog/slowdown_detector.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "baton/common/context_bucket.h"

namespace baton {
namespace {

// 1 % wide bins: the baseline is exact for equal bursts and within 1 % otherwise, far
// finer than the 5x threshold.
int bin_of(double seconds) {
  if (seconds <= 0.0) return std::numeric_limits<int>::min();
  static const double log_ratio = std::log(1.01);
  return static_cast<int>(std::floor(std::log(seconds) / log_ratio));
}

}  // namespace

void SlowdownDetector::Window::add(TimePoint done, double seconds) {
  const int bin = bin_of(seconds);
  samples.push_back(Sample{.done = done, .seconds = seconds, .bin = bin});
  Bin& b = bins[bin];
  b.seconds += seconds;
  ++b.count;
}

void SlowdownDetector::Window::expire(TimePoint now) {
  while (samples.size() > kMaxSamples ||
         (samples.size() > kMinSamples && samples.front().done < now - kHorizon)) {
    const Sample& s = samples.front();
    auto it = bins.find(s.bin);
    // Erasing an emptied bin, rather than subtracting, leaves no rounding residue behind.
    if (--it->second.count == 0) {
      bins.erase(it);
    } else {
      it->second.seconds -= s.seconds;
    }
    samples.pop_front();
  }
}

double SlowdownDetector::Window::median() const {
  double total = 0.0;
  for (const auto& entry : bins) total += entry.second.seconds;
  double below = 0.0;
  for (const auto& [bin, b] : bins) {
    below += b.seconds;
    if (below >= total / 2) return b.seconds / static_cast<double>(b.count);
  }
  return 0.0;
}

SlowdownDetector::SlowdownDetector(double factor, std::chrono::milliseconds min_excess,
                                   FaultLog& log, ActivityProbe probe)
    : factor_(factor),
      min_excess_s_(std::chrono::duration<double>(min_excess).count()),
      log_(log),
      probe_(std::move(probe)) {}

void SlowdownDetector::burst_done(const BurstRecord& burst) {
  if (!burst.ok) return;  // a failed burst is a fault of its own, not a slow one
  const double seconds = burst.running_seconds();
  double median = 0.0;
  bool new_event = false;
  {
    std::lock_guard lock(mu_);
    Window& window = windows_[Key{burst.engine, burst.kind, context_bucket(burst.context_tokens)}];
    window.expire(burst.done);
    if (window.samples.size() >= kMinSamples) median = window.median();
    // A flagged burst joins the baseline too: that is how a lasting change is absorbed.
    window.add(burst.done, seconds);
    // Keys that went quiet (a context bucket left behind) keep only kMinSamples.
    if (++bursts_ % kSweepEvery == 0) {
      for (auto& entry : windows_) entry.second.expire(burst.done);
    }
    const bool flagged =
        median > 0.0 && seconds > factor_ * median && seconds - median >= min_excess_s_;
    if (flagged) {
      auto [last, first] = last_flagged_.try_emplace(burst.engine, burst.done);
      new_event = first || burst.granted - last->second > kMergeGap;
      last->second = std::max(last->second, burst.done);
    }
  }
  if (!new_event) return;
  FaultEvent event;
  event.wall_time = std::chrono::system_clock::now();
  event.time = burst.done;
  event.onset = burst.granted;
  event.kind = FaultKind::slowdown;
  event.engine = burst.engine;
  if (probe_) event.engines = probe_();
  event.detail = std::string(to_string(burst.kind)) + " burst took " +
                 std::to_string(seconds * 1e3) + " ms, " + std::to_string(seconds / median) +
                 "x its time-weighted median of " + std::to_string(median * 1e3) + " ms";
  log_.record(std::move(event));
}

}  // namespace baton
