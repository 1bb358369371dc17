#include "baton/analysis/stream_exposure.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(StreamExposure, BusyAndDualOverAllStreams) {
  // a [0, 3600) and [1800, 5400) overlap: busy [0, 5400) once; b [3600, 7200); default
  // [7200, 9000) touches b without overlapping it.
  const StreamExposure e = measure_stream_exposure(
      {{"a", 0, 3600}, {"a", 1800, 5400}, {"b", 3600, 7200}, {"default", 7200, 9000}});
  EXPECT_DOUBLE_EQ(e.busy_hours, 2.5);
  EXPECT_DOUBLE_EQ(e.dual_hours, 0.5);  // a and b over [3600, 5400)
  EXPECT_DOUBLE_EQ(*e.dual_share, 0.2);
}

TEST(StreamExposure, HandOversBackToBackAreNoDualTime) {
  const StreamExposure e = measure_stream_exposure({{"a", 0, 1}, {"b", 1, 2}, {"a", 2, 3}});
  EXPECT_DOUBLE_EQ(e.busy_hours * 3600, 3.0);
  EXPECT_EQ(e.dual_hours, 0.0);
  EXPECT_EQ(*e.dual_share, 0.0);
}

TEST(StreamExposure, NothingBusyHasNoShare) {
  const StreamExposure e = measure_stream_exposure({{"a", 5, 5}});
  EXPECT_EQ(e.busy_hours, 0.0);
  EXPECT_FALSE(e.dual_share.has_value());
}

}  // namespace
}  // namespace baton
