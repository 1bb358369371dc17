// repro's JSON report read back (the cross-process scenario's children report so).
#include "baton/repro/repro_report.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(ReproReport, TheTurnsHandOverFiguresSurviveTheJsonRoundTrip) {
  ReproResult run;
  run.backend = "cpu";
  run.duration_s = 2.0;
  run.turn.policy = TurnPolicy::serialize;
  run.turn_stats.handovers = 8711;
  run.turn_stats.handover_us = {
      .count = 8711, .p50 = 0.36, .p99 = 39.5, .max = 912.0, .mean = 17.2};
  const ReproResult back = result_from_json(to_json(run));
  EXPECT_EQ(back.turn_stats.handovers, 8711u);
  EXPECT_DOUBLE_EQ(back.turn_stats.handover_us.p50, 0.36);
  EXPECT_DOUBLE_EQ(back.turn_stats.handover_us.p99, 39.5);
  EXPECT_DOUBLE_EQ(back.turn_stats.handover_us.mean, 17.2);
  EXPECT_DOUBLE_EQ(back.turn_stats.handover_us.max, 912.0);
  EXPECT_DOUBLE_EQ(back.duration_s, 2.0);
}

}  // namespace
}  // namespace baton
