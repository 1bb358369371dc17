// The mixture martingale against independent references:
// - values of M: the same mixture with a continuous normal prior on log R, integrated by
//   Simpson's rule over +-12 sd with 20000 steps in plain Python (math module only):
//   M = Int phi(t; 0, sd) prod_k sig(t + log(hb/ha))^b (1 - sig(..))^a dt / (the same at
//   log R0). The class's prior is that normal on a 241-point grid over +-6 sd, whose sum
//   agrees with the integral far below the 1e-6 relative tolerance used here;
// - the fixed-sample exact conditional test (compare_rates): one look never gives a smaller
//   p-value than it;
// - seeded Monte Carlo: the type-I error when looking after every pair, and the coverage of
//   the confidence sequence, within three standard errors of alpha.
#include "baton/analysis/rate_ratio_mixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "baton/analysis/rate_statistics.h"

namespace baton::rate_ratio_mixture_test {
namespace {

const double kSd5 = std::log(5.0);

TEST(RateRatioMixture, NoDataIsEvenOdds) {
  const RateRatioMixture m(kSd5);
  EXPECT_NEAR(m.log_e_value(1.0), 0.0, 1e-12);
  const RatioBounds b = m.bounds(0.05);
  EXPECT_EQ(b.low, 0.0);
  EXPECT_FALSE(b.high.has_value());
  EXPECT_FALSE(m.estimate().has_value());
}

TEST(RateRatioMixture, MatchesTheContinuousMixtureComputedInPython) {
  RateRatioMixture three_in_b(kSd5);
  three_in_b.add_pair(1.0, 0.0, 1.0, 3.0);
  EXPECT_NEAR(std::exp(three_in_b.log_e_value(1.0)), 1.9510282237690126, 2e-6);

  RateRatioMixture unequal(kSd5);
  unequal.add_pair(2.0, 1.0, 0.5, 2.0);
  EXPECT_NEAR(std::exp(unequal.log_e_value(1.0)), 1.6248726925904067, 2e-6);

  RateRatioMixture two_pairs(kSd5);
  two_pairs.add_pair(1.0, 4.0, 1.0, 0.0);
  two_pairs.add_pair(1.5, 3.0, 0.5, 0.0);
  EXPECT_NEAR(std::exp(two_pairs.log_e_value(1.0)), 5.8790333997151665, 6e-6);
  EXPECT_NEAR(std::exp(two_pairs.log_e_value(0.5)), 1.2461638255637082, 2e-6);

  RateRatioMixture narrow(std::log(2.0));
  narrow.add_pair(1.0, 6.0, 1.0, 1.0);
  EXPECT_NEAR(std::exp(narrow.log_e_value(1.0)), 1.728077011538324, 2e-6);
}

TEST(RateRatioMixture, PairsWithoutEventsChangeNothing) {
  RateRatioMixture m(kSd5);
  m.add_pair(1.0, 2.0, 3.0, 1.0);
  const double before = m.log_e_value(1.0);
  m.add_pair(5.0, 0.0, 0.1, 0.0);
  EXPECT_EQ(m.log_e_value(1.0), before);
}

TEST(RateRatioMixture, OneLookIsNeverBolderThanTheExactConditionalTest) {
  // Equal and unequal exposures, every split of up to 40 events.
  for (const double hb : {1.0, 0.5, 2.0, 0.2}) {
    for (int n = 1; n <= 40; ++n) {
      for (int b = 0; b <= n; ++b) {
        RateRatioMixture m(kSd5);
        m.add_pair(1.0, n - b, hb, b);
        const double p_mixture = std::min(1.0, std::exp(-m.log_e_value(1.0)));
        const double p_exact = compare_rates(b, hb, n - b, 1.0).p_value;
        EXPECT_GE(p_mixture, p_exact * (1.0 - 1e-9)) << "hb " << hb << " n " << n << " b " << b;
      }
    }
  }
}

TEST(RateRatioMixture, EstimateIsTheRatioOfRatesWhenExposuresAreInProportion) {
  RateRatioMixture m(kSd5);
  m.add_pair(1.0, 4.0, 1.0, 2.0);
  EXPECT_NEAR(*m.estimate(), 0.5, 1e-9);
  RateRatioMixture twice(kSd5);  // A: 4 in 2 h, B: 1 in 1 h -> (1/1) / (4/2)
  twice.add_pair(2.0, 4.0, 1.0, 1.0);
  EXPECT_NEAR(*twice.estimate(), 0.5, 1e-9);
  RateRatioMixture none_in_b(kSd5);
  none_in_b.add_pair(1.0, 3.0, 1.0, 0.0);
  EXPECT_EQ(*none_in_b.estimate(), 0.0);
  RateRatioMixture none_in_a(kSd5);
  none_in_a.add_pair(1.0, 0.0, 1.0, 3.0);
  EXPECT_FALSE(none_in_a.estimate().has_value());
}

TEST(RateRatioMixture, BoundsAreWhereTheEValueReachesOneOverAlpha) {
  RateRatioMixture m(kSd5);
  m.add_pair(1.0, 9.0, 1.2, 2.0);
  m.add_pair(0.8, 7.0, 1.0, 1.0);
  const RatioBounds b = m.bounds(0.05);
  ASSERT_TRUE(b.high.has_value());
  EXPECT_NEAR(m.log_e_value(b.low), std::log(20.0), 1e-6);
  EXPECT_NEAR(m.log_e_value(*b.high), std::log(20.0), 1e-6);
  EXPECT_LT(m.log_e_value(*m.estimate()), std::log(20.0));
  EXPECT_LT(b.low, *m.estimate());
  EXPECT_GT(*b.high, *m.estimate());
  // A wider sequence at a smaller alpha.
  const RatioBounds wide = m.bounds(0.01);
  EXPECT_LT(wide.low, b.low);
  EXPECT_GT(*wide.high, *b.high);
}

TEST(RateRatioMixture, OneSidedBoundsWhenAnArmSawNothing) {
  RateRatioMixture none_in_b(kSd5);
  none_in_b.add_pair(1.0, 12.0, 1.0, 0.0);
  const RatioBounds b = none_in_b.bounds(0.05);
  EXPECT_EQ(b.low, 0.0);
  ASSERT_TRUE(b.high.has_value());
  EXPECT_LT(*b.high, 1.0);  // 12 to 0 in equal hours: B is better
  RateRatioMixture none_in_a(kSd5);
  none_in_a.add_pair(1.0, 0.0, 1.0, 12.0);
  const RatioBounds a = none_in_a.bounds(0.05);
  EXPECT_GT(a.low, 1.0);
  EXPECT_FALSE(a.high.has_value());
}

// Poisson counts in pairs of random exposures at rates lambda (A) and R * lambda (B); for
// each run, whether M at R ever reaches 1/alpha over `pairs` looks.
double rejection_rate(double true_ratio, int runs, int pairs, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> hours(0.3, 1.5);
  int rejected = 0;
  for (int run = 0; run < runs; ++run) {
    RateRatioMixture m(kSd5);
    for (int k = 0; k < pairs; ++k) {
      const double ha = hours(random);
      const double hb = hours(random);
      const auto a = std::poisson_distribution<int>(0.8 * ha)(random);
      const auto b = std::poisson_distribution<int>(0.8 * true_ratio * hb)(random);
      m.add_pair(ha, a, hb, b);
      if (m.log_e_value(true_ratio) >= std::log(20.0)) {
        ++rejected;
        break;
      }
    }
  }
  return static_cast<double>(rejected) / runs;
}

TEST(RateRatioMixture, TypeOneErrorWhenLookingAfterEveryPair) {
  // 500 runs of 200 looks; alpha 0.05 with a standard error of 0.0097: at most 0.079.
  // (Seeds 17, 23 and 29 give 0.040, 0.032 and 0.022 in the three runs of these tests.)
  EXPECT_LE(rejection_rate(1.0, 500, 200, 17), 0.05 + 3 * 0.0097);
}

TEST(RateRatioMixture, ConfidenceSequenceHoldsTheTrueRatioAtAllTimes) {
  // The sequence excludes R exactly when M at R reaches 1/alpha (bounds() is checked
  // against log_e_value above): excluded at any of 200 looks in at most 0.079 of runs.
  EXPECT_LE(rejection_rate(0.3, 500, 200, 23), 0.05 + 3 * 0.0097);
  EXPECT_LE(rejection_rate(3.0, 500, 200, 29), 0.05 + 3 * 0.0097);
}

TEST(RateRatioMixture, RejectsBadInput) {
  EXPECT_THROW(RateRatioMixture(0.0), std::invalid_argument);
  EXPECT_THROW(RateRatioMixture(std::nan("")), std::invalid_argument);
  RateRatioMixture m(kSd5);
  EXPECT_THROW(m.add_pair(0.0, 1.0, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(m.add_pair(1.0, 1.0, -1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(m.add_pair(1.0, -1.0, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(m.add_pair(1.0, std::nan(""), 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(m.add_pair(std::numeric_limits<double>::infinity(), 1.0, 1.0, 1.0),
               std::invalid_argument);
  EXPECT_THROW(m.log_e_value(0.0), std::invalid_argument);
  EXPECT_THROW(m.bounds(1.0), std::invalid_argument);
}

}  // namespace
}  // namespace baton::rate_ratio_mixture_test
