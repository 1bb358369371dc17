#include "baton/watchdog/slowdown_detector.h"

#include <gtest/gtest.h>

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

TEST(SlowdownDetector, FailedBurstsAreNotSlowdowns) {
  FaultLog log;
  SlowdownDetector detector(5.0, milliseconds(10), log, nullptr);
  for (int i = 0; i < 20; ++i) detector.burst_done(burst(10.0));
  BurstRecord failed = burst(1000.0);
  failed.ok = false;
  detector.burst_done(failed);
  EXPECT_TRUE(log.events().empty());
}

}  // namespace
}  // namespace baton
