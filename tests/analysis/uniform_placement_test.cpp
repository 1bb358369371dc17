// The uniform-placement test and its dependence variants on hand-built timelines.
#include "baton/analysis/uniform_placement.h"

#include <gtest/gtest.h>

#include <cmath>

#include "baton/analysis/hang_analysis.h"

namespace baton {
namespace {

// A busy [0, 3000 s), B busy [2000, 3000 s): busy 3000 s, dual 1000 s, dual_share 1/3.
std::vector<BusyInterval> third_dual(double offset = 0.0) {
  return {{"A", offset, offset + 3000, std::nullopt, ""},
          {"B", offset + 2000, offset + 3000, std::nullopt, ""}};
}

TEST(UniformPlacement, AllHangsInDualIsDualShareToTheN) {
  const Analysis a =
      analyze_hangs({third_dual(), {{2100, "A"}, {2200, "A"}, {2900, "B"}}}, AnalysisOptions{});
  EXPECT_NEAR(*a.dual_share, 1.0 / 3.0, 1e-12);
  EXPECT_EQ(a.uniform.n, 3);
  EXPECT_EQ(a.uniform.in_dual, 3);
  EXPECT_NEAR(a.uniform.p, 1.0 / 27.0, 1e-12);
  // Within one 45-minute cluster and one day: one independent observation, p = 1/3.
  EXPECT_EQ(a.dependence.clusters, 1);
  EXPECT_NEAR(a.dependence.p_clusters, 1.0 / 3.0, 1e-12);
  EXPECT_EQ(a.dependence.days, 1);
  EXPECT_NEAR(a.dependence.p_days, 1.0 / 3.0, 1e-12);
}

TEST(UniformPlacement, MixedPlacement) {
  // 2 of 4 in dual: P(X >= 2), X ~ Bin(4, 1/3) = 33/81.
  const Analysis a = analyze_hangs(
      {third_dual(), {{100, "A"}, {1500, "A"}, {2100, "A"}, {2200, "B"}}}, AnalysisOptions{});
  EXPECT_EQ(a.uniform.n, 4);
  EXPECT_EQ(a.uniform.in_dual, 2);
  EXPECT_NEAR(a.uniform.p, 33.0 / 81.0, 1e-12);
}

TEST(UniformPlacement, UnattributedAndOutsideBusyHangsAreNotTested) {
  const Analysis a =
      analyze_hangs({third_dual(), {{2100, ""}, {2200, ""}, {5000, "A"}}}, AnalysisOptions{});
  EXPECT_EQ(a.hangs.total, 3);
  EXPECT_EQ(a.hangs.unattributed, 2);
  EXPECT_EQ(a.hangs.outside_busy, 1);
  EXPECT_EQ(a.uniform.n, 0);
  EXPECT_EQ(a.uniform.p, 1.0);
  EXPECT_EQ(a.dependence.clusters, 0);
  EXPECT_EQ(a.dependence.p_days, 1.0);
}

TEST(UniformPlacement, ZeroDualTime) {
  // A then B, never together: dual_share 0, no hang can be in dual, p = 1.
  const Analysis a = analyze_hangs(
      {{{"A", 0, 10, std::nullopt, ""}, {"B", 10, 20, std::nullopt, ""}}, {{5, "A"}, {15, "B"}}},
      AnalysisOptions{});
  EXPECT_EQ(*a.dual_share, 0.0);
  EXPECT_EQ(a.uniform.n, 2);
  EXPECT_EQ(a.uniform.in_dual, 0);
  EXPECT_EQ(a.uniform.p, 1.0);
  EXPECT_EQ(a.dual_rate.per_hour, std::nullopt);
}

TEST(UniformPlacement, NoHangs) {
  const Analysis a = analyze_hangs({third_dual(), {}}, AnalysisOptions{});
  EXPECT_EQ(a.uniform.n, 0);
  EXPECT_EQ(a.uniform.p, 1.0);
  EXPECT_EQ(*a.busy_rate.per_hour, 0.0);
  EXPECT_NEAR(*a.busy_rate.high, std::log(40.0) / (3000.0 / 3600.0), 1e-9);
}

TEST(UniformPlacement, ClustersChainAndDaysSplitAtUtcMidnight) {
  // Busy from 2024-11-30T23:10:00Z (1733008200, by date -u) for 4000 s; midnight is
  // 1733011200 (t0 + 3000). Hangs at 23:45:00, 23:51:40, 23:59:10 (in dual) and
  // 00:08:20 on Dec 1 (A alone).
  const double t0 = 1733008200.0;
  std::vector<BusyInterval> intervals = third_dual(t0);
  intervals.push_back({"A", t0 + 3000, t0 + 4000, std::nullopt, ""});  // after midnight
  AnalysisOptions options;
  options.cluster_window_s = 200;
  const Analysis a = analyze_hangs(
      {intervals, {{t0 + 2100, "A"}, {t0 + 2500, "A"}, {t0 + 2950, "B"}, {t0 + 3500, "A"}}},
      options);
  // 4000 s busy, 1000 s dual: share 1/4.
  EXPECT_NEAR(*a.dual_share, 0.25, 1e-12);
  EXPECT_EQ(a.uniform.in_dual, 3);
  // Clusters with a 200 s window: {2100}, {2500}, {2950}, {3500}: four, three in dual.
  EXPECT_EQ(a.dependence.clusters, 4);
  EXPECT_EQ(a.dependence.clusters_in_dual, 3);
  // Days: the first three fall on Nov 30, the last on Dec 1 (after 1733011200).
  EXPECT_EQ(a.dependence.days, 2);
  EXPECT_EQ(a.dependence.days_in_dual, 1);
  // P(X >= 1), X ~ Bin(2, 1/4) = 1 - (3/4)^2 = 7/16.
  EXPECT_NEAR(a.dependence.p_days, 7.0 / 16.0, 1e-12);
  // Chaining: with a 450 s window 2100 -> 2500 -> 2950 chain into one cluster.
  options.cluster_window_s = 450;
  const Analysis chained = analyze_hangs(
      {intervals, {{t0 + 2100, "A"}, {t0 + 2500, "A"}, {t0 + 2950, "B"}, {t0 + 3500, "A"}}},
      options);
  EXPECT_EQ(chained.dependence.clusters, 2);
}

TEST(UniformPlacement, OnlyTheChosenClassesCount) {
  const Analysis a = analyze_hangs(
      {third_dual(), {{2100, "A", "slowdown"}, {2200, "A", "timeout"}}}, AnalysisOptions{});
  EXPECT_EQ(a.hangs.total, 1);
}

}  // namespace
}  // namespace baton
