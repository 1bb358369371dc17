#include "baton/watchdog/slowdown_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "baton/common/context_bucket.h"

namespace baton {
namespace {

using std::chrono::milliseconds;

BurstRecord burst(double ms, std::size_t context = 1000, std::string engine = "decode-1") {
  BurstRecord r;
  r.engine = std::move(engine);
  r.kind = BurstKind::decode;
  r.context_tokens = context;
  r.granted = TimePoint{} + std::chrono::seconds(1);
  r.done = r.granted + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double, std::milli>(ms));
  return r;
}

TEST(SlowdownDetector, FlagsABurstFarAboveItsRollingMedian) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(10.0));
  detector.burst_done(burst(45.0));  // 4.5x: not a slowdown
  EXPECT_TRUE(log.events().empty());
  detector.burst_done(burst(60.0));  // 6x
  const auto events = log.events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::slowdown);
  EXPECT_EQ(events[0].engine, "decode-1");
}

TEST(SlowdownDetector, NoVerdictBeforeEnoughSamples) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (std::size_t i = 0; i + 1 < SlowdownDetector::kMinSamples; ++i)
    detector.burst_done(burst(10.0));
  detector.burst_done(burst(100.0));
  EXPECT_TRUE(log.events().empty());
}

TEST(SlowdownDetector, ComparesOnlyTheSameEngineAndContextBucket) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(10.0, 1000));
  detector.burst_done(burst(100.0, 8000));              // another bucket: no history
  detector.burst_done(burst(100.0, 1000, "decode-2"));  // another engine: no history
  EXPECT_TRUE(log.events().empty());
  EXPECT_EQ(context_bucket(1000), context_bucket(1020));
  EXPECT_NE(context_bucket(1000), context_bucket(8000));
}

TEST(SlowdownDetector, TinyBurstsNeedAnAbsoluteExcessToo) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(0.2));
  detector.burst_done(burst(2.0));  // 10x, but 1.8 ms longer: scheduling noise
  EXPECT_TRUE(log.events().empty());
  detector.burst_done(burst(20.0));  // 100x and 19.8 ms longer
  EXPECT_EQ(log.events().size(), 1u);
}

// Under serialize/op a burst hands the turn over at its yield points and waits for it
// back: that wait is another engine's time (most likely the soak's embedding bursts of 5.5 ms
// against a 0.2 ms median), not a slowdown.
TEST(SlowdownDetector, WaitsAtYieldPointsAreNotTheBurstsTime) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(1), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(0.2));
  BurstRecord waited = burst(5.5);
  waited.yielded = std::chrono::microseconds(5300);
  detector.burst_done(waited);
  EXPECT_TRUE(log.events().empty());
  BurstRecord slow = burst(10.5);  // 5.3 ms of waits, 5.2 ms of its own: 26x
  slow.yielded = std::chrono::microseconds(5300);
  detector.burst_done(slow);
  EXPECT_EQ(log.events().size(), 1u);
}

TEST(SlowdownDetector, FailedBurstsAreNotSlowdowns) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(10.0));
  BurstRecord failed = burst(1000.0);
  failed.ok = false;
  detector.burst_done(failed);
  EXPECT_TRUE(log.events().empty());
}

// One engine's bursts back to back on a fake clock: only their BurstRecord timestamps
// (granted, done) tell the detector what time it is.
class Timeline {
 public:
  explicit Timeline(SlowdownDetector& detector, std::string engine = "decode-1")
      : detector_(detector), engine_(std::move(engine)) {}

  // Bursts cycling through `steps_ms` for `seconds`; returns when the first one began.
  TimePoint run(const std::vector<double>& steps_ms, double seconds) {
    const TimePoint start = now_;
    const TimePoint end = now_ + span(seconds * 1e3);
    for (std::size_t i = 0; now_ < end; ++i) {
      BurstRecord r;
      r.engine = engine_;
      r.kind = BurstKind::decode;
      r.context_tokens = 1000;
      r.granted = now_;
      r.done = now_ + span(steps_ms[i % steps_ms.size()]);
      now_ = r.done;
      detector_.burst_done(r);
    }
    return start;
  }
  void idle(double seconds) { now_ += span(seconds * 1e3); }

 private:
  static Clock::duration span(double ms) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::nanoseconds(std::llround(ms * 1e6)));
  }
  SlowdownDetector& detector_;
  std::string engine_;
  TimePoint now_ = TimePoint{} + std::chrono::seconds(100);
};

// The H200 failure (docs/benchmarks.md): a decoder alone for seconds, then sharing for
// good at 2x-12x its solo step. The first seconds of sharing look like an episode, so the
// bound is one event: flagged steps come every 5 steps (0.145 s, under the 1 s merge gap)
// until the change holds half the 8 s horizon (4 s), and none after. Counted in bursts,
// every 8x and 12x step of the first 64 was an event of its own.
TEST(SlowdownDetector, SharingAfterSecondsAloneIsAtMostOneEvent) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  decoder.run({5.0}, 5.0);
  const std::vector<double> shared = {10.0, 15.0, 20.0, 40.0, 60.0};
  decoder.run(shared, 5.0);
  EXPECT_LE(log.events().size(), 1u);
  // Absorbed: after a pause (a new event would not merge), sharing is the baseline.
  decoder.idle(2.0);
  decoder.run(shared, 3.0);
  EXPECT_LE(log.events().size(), 1u);
}

// The other side of the H200 failure: 2 s alone (another engine slowed or hung) at a tenth
// of the shared step, 800 bursts, does not make the return to sharing a slowdown.
TEST(SlowdownDetector, ASoloSpellDoesNotFlagTheReturnToSharing) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  decoder.run({25.0}, 10.0);
  decoder.run({2.5}, 2.0);
  decoder.run({25.0}, 5.0);
  EXPECT_TRUE(log.events().empty());
}

// The injected episode (--slowdown-factor 10 --slowdown-seconds 2): one event each, from
// the episode's first burst; the first does not hide the second 3 s later.
TEST(SlowdownDetector, ATenfoldEpisodeIsOneEvent) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  decoder.run({5.0}, 10.0);
  const TimePoint first = decoder.run({50.0}, 2.0);
  decoder.run({5.0}, 3.0);
  const TimePoint second = decoder.run({50.0}, 2.0);
  decoder.run({5.0}, 3.0);
  const auto events = log.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].onset, first);
  EXPECT_EQ(events[1].onset, second);
}

// After 2 s of tenfold bursts the baseline is still the old one: a horizon short enough to
// absorb the episode would miss the slow burst after the pause.
TEST(SlowdownDetector, AnEpisodeIsJudgedAgainstTheOldBaselineToItsEnd) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  decoder.run({5.0}, 10.0);
  decoder.run({50.0}, 2.0);
  decoder.idle(1.5);  // longer than the merge gap: the next flag is a new event
  decoder.run({50.0}, 0.2);
  EXPECT_EQ(log.events().size(), 2u);
}

// Back at solo speed for longer than the horizon, the baseline is the solo step again.
TEST(SlowdownDetector, ARegimeThatReturnsToSoloSpeedIsJudgedAtSoloSpeedAgain) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  decoder.run({5.0}, 5.0);
  decoder.run({20.0}, 10.0);  // 4x: sharing, never a slowdown
  decoder.run({5.0}, 10.0);   // faster: never a slowdown
  EXPECT_TRUE(log.events().empty());
  decoder.run({50.0}, 0.05);  // 10x solo, 2.5x shared
  EXPECT_EQ(log.events().size(), 1u);
}

TEST(SlowdownDetector, FlagsOfOneEngineAreOneEventOnlyWhenClose) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline decoder(detector);
  Timeline other(detector, "decode-2");
  decoder.run({10.0}, 5.0);
  other.run({10.0}, 5.0);
  decoder.run({100.0}, 0.1);
  decoder.run({10.0}, 0.5);
  decoder.run({100.0}, 0.1);  // 0.5 s after the last flag: the same event
  EXPECT_EQ(log.events().size(), 1u);
  decoder.run({10.0}, 2.0);
  decoder.run({100.0}, 0.1);  // 2 s after: a new one
  other.run({100.0}, 0.1);    // another engine: its own
  EXPECT_EQ(log.events().size(), 3u);
}

// A key with a burst every 30 s keeps its newest kMinSamples bursts past the horizon.
TEST(SlowdownDetector, SparseBurstsStillGetAVerdict) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  Timeline prefill(detector, "prefill-1");
  for (std::size_t i = 0; i < SlowdownDetector::kMinSamples; ++i) {
    prefill.run({100.0}, 0.1);
    prefill.idle(30.0);
  }
  prefill.run({1000.0}, 1.0);
  EXPECT_EQ(log.events().size(), 1u);
}

TEST(SlowdownDetector, EnginesOnManyThreadsAtOnce) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(5), log, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&detector, t] {
      Timeline engine(detector, "decode-" + std::to_string(t));
      engine.run({5.0}, 10.0);
      engine.run({50.0}, 0.05);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(log.events().size(), 4u);
}

}  // namespace
}  // namespace baton
