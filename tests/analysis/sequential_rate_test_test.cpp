// The live experiment's verdict over blocks: clusters counted per block (by hand), blocks
// paired in order and fed to the mixture (checked against RateRatioMixture fed the same
// pairs by hand), the decision, the plan, and bad input named by field.
#include "baton/analysis/sequential_rate_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/analysis/rate_statistics.h"

namespace baton::sequential_rate_test_test {
namespace {

using Decision = SequentialVerdict::Decision;

const SequentialDesign kDesign{
    .alpha = 0.05, .planned_hours = 0.0, .reduction = 5.0, .cluster_window_s = 2700.0};

// A block with `clusters` clusters of `per_cluster` hangs 60 s apart, clusters 3 h apart.
ExperimentBlock block(int arm, double hours, int clusters, int per_cluster = 1) {
  ExperimentBlock b{.arm = arm, .hours = hours, .hang_times_s = {}};
  for (int c = 0; c < clusters; ++c) {
    for (int h = 0; h < per_cluster; ++h) b.hang_times_s.push_back(c * 10800.0 + h * 60.0);
  }
  return b;
}

TEST(CountClusters, ChainsHangsWithinTheWindowInAnyOrder) {
  // 0 and 100 join; 3000 is 2900 s after 100 (new); 5700 is exactly 2700 after (joins);
  // 9000 is 3300 after 5700 (new): 3 clusters.
  const std::vector<double> times{5700.0, 0.0, 9000.0, 100.0, 3000.0};
  EXPECT_EQ(count_clusters(times, 2700.0), 3);
  EXPECT_EQ(count_clusters(times, 0.0), 5);
  EXPECT_EQ(count_clusters(std::vector<double>{}, 2700.0), 0);
  EXPECT_THROW(count_clusters(times, -1.0), std::invalid_argument);
  EXPECT_THROW(count_clusters(std::vector<double>{std::nan("")}, 1.0), std::invalid_argument);
}

TEST(SequentialVerdict, PairsBlocksInOrderAndTestsClusters) {
  // A A B B A: pairs (A0, B2) and (A1, B3); A4 waits. Clusters of 3 hangs count once.
  const std::vector<ExperimentBlock> blocks{block(0, 1.0, 2, 3), block(0, 2.0, 3),
                                            block(1, 1.5, 1, 2), block(1, 1.0, 0),
                                            block(0, 1.0, 4)};
  const SequentialVerdict v = sequential_verdict(blocks, kDesign);
  EXPECT_DOUBLE_EQ(v.hours_a, 4.0);
  EXPECT_DOUBLE_EQ(v.hours_b, 2.5);
  EXPECT_EQ(v.hangs_a, 6 + 3 + 4);
  EXPECT_EQ(v.hangs_b, 2);
  EXPECT_EQ(v.clusters_a, 2 + 3 + 4);
  EXPECT_EQ(v.clusters_b, 1);
  EXPECT_EQ(v.tested_clusters_a, 5);  // the waiting block's 4 are not tested yet
  EXPECT_EQ(v.tested_clusters_b, 1);

  RateRatioMixture by_hand(std::log(5.0));
  by_hand.add_pair(1.0, 2.0, 1.5, 1.0);
  by_hand.add_pair(2.0, 3.0, 1.0, 0.0);
  EXPECT_NEAR(v.p_value, std::min(1.0, std::exp(-by_hand.log_e_value(1.0))), 1e-12);
  EXPECT_NEAR(*v.ratio, *by_hand.estimate(), 1e-9);
  const RatioBounds bounds = by_hand.bounds(0.05);
  EXPECT_NEAR(v.ratio_low, bounds.low, 1e-9);
  EXPECT_NEAR(*v.ratio_high, *bounds.high, 1e-6);
  EXPECT_EQ(v.decision, Decision::continue_);
}

TEST(SequentialVerdict, NamesTheArmWithFewerClusters) {
  std::vector<ExperimentBlock> blocks;
  for (int k = 0; k < 12; ++k) {
    blocks.push_back(block(0, 1.0, 2));
    blocks.push_back(block(1, 1.0, k % 4 == 0 ? 1 : 0));
  }
  const SequentialVerdict v = sequential_verdict(blocks, kDesign);
  EXPECT_EQ(v.decision, Decision::b_better);
  EXPECT_LE(v.p_value, 0.05);
  EXPECT_LT(*v.ratio_high, 1.0);  // the sequence excludes 1 on B's side
  EXPECT_EQ(*v.hours_still_needed, 0.0);

  for (ExperimentBlock& b : blocks) b.arm = 1 - b.arm;
  const SequentialVerdict mirrored = sequential_verdict(blocks, kDesign);
  EXPECT_EQ(mirrored.decision, Decision::a_better);
  EXPECT_GT(mirrored.ratio_low, 1.0);
}

TEST(SequentialVerdict, PValueNeverRisesAndTheVerdictStands) {
  // B is worse early, then the arms even out: the p-value keeps its smallest value.
  SequentialRateTest test(kDesign);
  double last = 1.0;
  for (int k = 0; k < 8; ++k) {
    test.add_block(block(0, 1.0, 0));
    test.add_block(block(1, 1.0, 3));
    const double p = test.verdict().p_value;
    EXPECT_LE(p, last);
    last = p;
  }
  ASSERT_EQ(test.decision(), Decision::a_better);
  for (int k = 0; k < 40; ++k) {
    test.add_block(block(0, 1.0, 2));
    test.add_block(block(1, 1.0, 1));
  }
  // 80 to 64 clusters now: the evidence of now alone is far weaker, the p-value keeps its
  // low point.
  EXPECT_GT(compare_rates(80, 48.0, 64, 48.0).p_value, 0.05);
  EXPECT_EQ(test.verdict().p_value, last);
  EXPECT_EQ(test.decision(), Decision::a_better);
}

TEST(SequentialVerdict, OneLookIsNeverBolderThanCompareRates) {
  // One pair of equal blocks: the fixed-sample exact conditional test on the same clusters.
  for (int a = 0; a <= 25; ++a) {
    for (int b = 0; b <= 25; ++b) {
      const std::vector<ExperimentBlock> blocks{block(0, 2.0, a), block(1, 2.0, b)};
      const SequentialVerdict v = sequential_verdict(blocks, kDesign);
      EXPECT_GE(v.p_value, compare_rates(a, 2.0, b, 2.0).p_value * (1 - 1e-9)) << a << " vs " << b;
    }
  }
}

TEST(SequentialVerdict, ThePlanRunsOut) {
  SequentialDesign planned = kDesign;
  planned.planned_hours = 4.0;
  std::vector<ExperimentBlock> blocks{block(0, 1.0, 1), block(1, 1.0, 1)};
  SequentialVerdict v = sequential_verdict(blocks, planned);
  EXPECT_EQ(v.decision, Decision::continue_);
  EXPECT_DOUBLE_EQ(*v.planned_hours_left, 2.0);
  blocks.push_back(block(1, 1.0, 1));
  blocks.push_back(block(0, 1.0, 1));
  v = sequential_verdict(blocks, planned);
  EXPECT_EQ(v.decision, Decision::no_difference);
  EXPECT_DOUBLE_EQ(*v.planned_hours_left, 0.0);
  EXPECT_FALSE(sequential_verdict(blocks, kDesign).planned_hours_left.has_value());
}

TEST(SequentialVerdict, HoursStillNeededReachOneOverAlphaUnderThePlannedCut) {
  // A: 3 clusters in 2 h, B: 1 in 2 h. Projection: A keeps 1.5/h, B runs at 0.3/h.
  const std::vector<ExperimentBlock> blocks{block(0, 2.0, 3), block(1, 2.0, 1)};
  const SequentialVerdict v = sequential_verdict(blocks, kDesign);
  ASSERT_EQ(v.decision, Decision::continue_);
  ASSERT_TRUE(v.hours_still_needed.has_value());
  const double x = *v.hours_still_needed;
  RateRatioMixture by_hand(std::log(5.0));
  by_hand.add_pair(2.0, 3.0, 2.0, 1.0);
  EXPECT_GE(by_hand.log_e_value_with(x / 2, 1.5 * x / 2, x / 2, 0.3 * x / 2), std::log(20.0));
  const double less = x - 0.02;
  EXPECT_LT(by_hand.log_e_value_with(less / 2, 1.5 * less / 2, less / 2, 0.3 * less / 2),
            std::log(20.0));
}

TEST(SequentialVerdict, NothingToCompareYet) {
  // No hangs at all.
  const std::vector<ExperimentBlock> quiet{block(0, 1.0, 0), block(1, 1.0, 0)};
  SequentialVerdict v = sequential_verdict(quiet, kDesign);
  EXPECT_EQ(v.p_value, 1.0);
  EXPECT_FALSE(v.ratio.has_value());
  EXPECT_EQ(v.ratio_low, 0.0);
  EXPECT_FALSE(v.ratio_high.has_value());
  EXPECT_FALSE(v.hours_still_needed.has_value());
  EXPECT_EQ(v.decision, Decision::continue_);
  // Only arm A has run: its hangs are counted, nothing is tested.
  const std::vector<ExperimentBlock> one_arm{block(0, 1.0, 2), block(0, 1.0, 1)};
  v = sequential_verdict(one_arm, kDesign);
  EXPECT_EQ(v.clusters_a, 3);
  EXPECT_EQ(v.tested_clusters_a, 0);
  EXPECT_EQ(v.p_value, 1.0);
  EXPECT_FALSE(v.hours_still_needed.has_value());
  // A block of zero hours is counted but never paired.
  const std::vector<ExperimentBlock> idle{block(0, 0.0, 2), block(1, 1.0, 0), block(0, 1.0, 1)};
  v = sequential_verdict(idle, kDesign);
  EXPECT_EQ(v.hangs_a, 3);
  EXPECT_EQ(v.tested_clusters_a, 1);
  EXPECT_EQ(v.tested_clusters_b, 0);
  EXPECT_TRUE(sequential_verdict(std::vector<ExperimentBlock>{}, kDesign).decision ==
              Decision::continue_);
}

void expect_invalid(const std::vector<ExperimentBlock>& blocks, const SequentialDesign& design,
                    const std::string& field) {
  try {
    sequential_verdict(blocks, design);
    ADD_FAILURE() << "no error for " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(SequentialVerdict, RejectsBadInputNamingTheField) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<ExperimentBlock> good{block(0, 1.0, 1)};
  expect_invalid({block(2, 1.0, 0)}, kDesign, "arm");
  expect_invalid({block(-1, 1.0, 0)}, kDesign, "arm");
  expect_invalid({block(0, -1.0, 0)}, kDesign, "hours");
  expect_invalid({block(0, nan, 0)}, kDesign, "hours");
  expect_invalid({block(0, inf, 0)}, kDesign, "hours");
  expect_invalid({block(0, 1.0, 0), ExperimentBlock{.arm = 1, .hours = 1.0, .hang_times_s = {nan}}},
                 kDesign, "block 1: hang_times_s");
  SequentialDesign d = kDesign;
  d.alpha = 0.0;
  expect_invalid(good, d, "alpha");
  d = kDesign;
  d.alpha = nan;
  expect_invalid(good, d, "alpha");
  d = kDesign;
  d.reduction = 1.0;
  expect_invalid(good, d, "reduction");
  d = kDesign;
  d.planned_hours = -1.0;
  expect_invalid(good, d, "planned_hours");
  d = kDesign;
  d.planned_hours = nan;
  expect_invalid(good, d, "planned_hours");
  d = kDesign;
  d.cluster_window_s = -5.0;
  expect_invalid(good, d, "cluster_window_s");
}

}  // namespace
}  // namespace baton::sequential_rate_test_test
