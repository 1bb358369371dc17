// SlowdownDetector: a burst far slower than the recent baseline of the same engine, kind
// and context-length bucket is a slowdown (the tenfold slowdowns that came before hangs
// in MISSION.md). Burst time is from getting the turn to completion, less the waits for it
// at yield points inside the burst, so waiting for the turn is not a slowdown; sharing the
// device with a concurrent stream is. A slowdown must
// also exceed the baseline by `min_excess`, so scheduling noise on tiny bursts is not one.
//
// The baseline is time-weighted: the median of the bursts done in the last kHorizon (8 s,
// by the bursts' own timestamps), each weighted by its duration. A regime moves it only
// once it holds half the horizon's burst time, however many bursts it had: counted in
// bursts, 2 s of 2 ms steps alone on the chip outweighed every shared step before them.
// kHorizon / 2 = 4 s is twice the longest spell we expect (a 2 s injected slowdown, a
// 2 s watchdog deadline during which another engine is hung), so, for a busy engine,
//   - a solo spell of up to 4 s does not make the return to sharing a slowdown;
//   - a tenfold episode of up to 4 s is still judged against the old baseline to its end;
//   - a lasting change (sharing begins) is absorbed after 4 s of busy time, at most
//     kHorizon of wall time, as one event (below).
// The newest kMinSamples bursts of a key stay whatever their age, and there is no verdict
// before that many.
// Flagged bursts of one engine less than kMergeGap apart are one event: one FaultEvent for
// the first, none for the rest, so an episode is one event, not one per step.
// Thread-safety: burst_done() is thread-safe (one mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "baton/turn/burst_observer.h"
#include "baton/watchdog/fault_log.h"

namespace baton {

class SlowdownDetector final : public BurstObserver {
 public:
  using ActivityProbe = std::function<std::vector<EngineActivity>()>;
  static constexpr std::chrono::seconds kHorizon{8};   // wall time the baseline spans
  static constexpr std::size_t kMinSamples = 16;       // kept whatever their age
  static constexpr std::size_t kMaxSamples = 8192;     // per key; bursts < 1 ms: shorter
  static constexpr std::chrono::seconds kMergeGap{1};  // flags closer than this: one event

  SlowdownDetector(double factor, std::chrono::milliseconds min_excess, FaultLog& log,
                   ActivityProbe probe);
  void burst_done(const BurstRecord& burst) override;

 private:
  using Key = std::tuple<std::string, BurstKind, std::size_t>;
  struct Sample {
    TimePoint done;
    double seconds = 0.0;
    int bin = 0;
  };
  struct Bin {
    double seconds = 0.0;  // the summed durations: the bin's weight
    std::size_t count = 0;
  };
  // One key's bursts in the horizon, and their durations on a 1 % log scale, so the
  // weighted median is a walk over a few occupied bins, not a sort of thousands of bursts.
  struct Window {
    std::deque<Sample> samples;
    std::map<int, Bin> bins;
    void add(TimePoint done, double seconds);
    void expire(TimePoint now);
    double median() const;  // 0 when empty
  };
  static constexpr std::uint64_t kSweepEvery = 1024;  // bursts between expiring idle keys

  const double factor_;
  const double min_excess_s_;
  FaultLog& log_;
  ActivityProbe probe_;
  std::mutex mu_;
  std::map<Key, Window> windows_;                  // guarded by mu_
  std::map<std::string, TimePoint> last_flagged_;  // done of each engine's last flag; mu_
  std::uint64_t bursts_ = 0;                       // guarded by mu_
};

}  // namespace baton
