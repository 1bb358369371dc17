#include "baton/gpu/overlap_meter.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using std::chrono::milliseconds;

TEST(OverlapMeter, CountsOnlyTimeWithTwoOrMoreBusyStreams) {
  OverlapMeter meter;
  const TimePoint t0{};
  meter.stream_busy(0, t0);
  meter.stream_busy(1, t0 + milliseconds(10));  // overlap starts
  meter.stream_busy(2, t0 + milliseconds(15));
  meter.stream_idle(0, t0 + milliseconds(20));
  meter.stream_idle(1, t0 + milliseconds(30));  // back to one busy: overlap 10..30
  meter.stream_busy(0, t0 + milliseconds(40));  // second episode 40..45
  meter.stream_idle(2, t0 + milliseconds(45));
  meter.stream_idle(0, t0 + milliseconds(50));
  const OverlapReading r = meter.read(t0 + milliseconds(60));
  EXPECT_NEAR(r.overlap_s, 0.025, 1e-12);
  EXPECT_EQ(r.episodes, 2u);
  EXPECT_EQ(r.max_busy, 3u);
  EXPECT_EQ(r.busy_now, 0u);
}

TEST(OverlapMeter, OpenEpisodeCountsUpToTheReading) {
  OverlapMeter meter;
  const TimePoint t0{};
  meter.stream_busy(0, t0);
  meter.stream_busy(1, t0 + milliseconds(5));
  EXPECT_NEAR(meter.read(t0 + milliseconds(12)).overlap_s, 0.007, 1e-12);
  EXPECT_EQ(meter.read(t0 + milliseconds(12)).busy_now, 2u);
}

TEST(OverlapMeter, SequentialStreamsNeverOverlap) {
  OverlapMeter meter;
  const TimePoint t0{};
  for (int i = 0; i < 100; ++i) {
    meter.stream_busy(static_cast<StreamId>(i % 3), t0 + milliseconds(2 * i));
    meter.stream_idle(static_cast<StreamId>(i % 3), t0 + milliseconds(2 * i + 1));
  }
  EXPECT_EQ(meter.read(t0 + milliseconds(500)).overlap_s, 0.0);
  EXPECT_EQ(meter.read().episodes, 0u);
}

}  // namespace
}  // namespace baton
