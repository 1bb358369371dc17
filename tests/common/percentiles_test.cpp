#include "baton/common/percentiles.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(Percentiles, NearestRankOnKnownSample) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // 1..100, unsorted
  EXPECT_DOUBLE_EQ(percentile(samples, 0.50), 50.0);
  EXPECT_DOUBLE_EQ(percentile(samples, 0.99), 99.0);
  EXPECT_DOUBLE_EQ(percentile(samples, 1.0), 100.0);
  EXPECT_DOUBLE_EQ(percentile(samples, 0.0), 1.0);
}

TEST(Percentiles, SummaryOfSmallSample) {
  const LatencySummary s = summarize({3.0, 1.0, 2.0});
  EXPECT_EQ(s.count, 3u);
  EXPECT_DOUBLE_EQ(s.p50, 2.0);
  EXPECT_DOUBLE_EQ(s.p99, 3.0);
  EXPECT_DOUBLE_EQ(s.max, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
}

TEST(Percentiles, EmptySampleIsZero) {
  const LatencySummary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p50, 0.0);
}

}  // namespace
}  // namespace baton
