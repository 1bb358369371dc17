// Reference values were computed independently of Boost, with Python's math module only:
// Garwood bounds by bisection on the Poisson CDF written out as a sum, binomial tails as
// sums of math.comb terms, Clopper-Pearson bounds by bisection on those tails.
#include "baton/analysis/rate_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace baton {
namespace {

constexpr double kTol = 1e-9;

TEST(PoissonRate, GarwoodIntervalForNoEventIsMinusLogOfTheTail) {
  // k = 0: lower 0; upper solves exp(-mu) = 0.025, mu = ln 40 = 3.688879454113936.
  const RateEstimate r = poisson_rate(0, 2.0);
  EXPECT_EQ(r.per_hour, 0.0);
  EXPECT_EQ(r.low, 0.0);
  EXPECT_NEAR(*r.high, std::log(40.0) / 2.0, kTol);
}

TEST(PoissonRate, GarwoodIntervalsMatchIndependentBisection) {
  // k = 1: lower solves 1 - exp(-mu) = 0.025 (mu = -ln 0.975); upper solves
  // exp(-mu)(1 + mu) = 0.025, by bisection 5.571643390938899.
  const RateEstimate one = poisson_rate(1, 1.0);
  EXPECT_NEAR(*one.low, -std::log(0.975), kTol);
  EXPECT_NEAR(*one.high, 5.571643390938899, 1e-7);
  // k = 10 over 5 hours: bisection gives 4.795388696132433 and 18.39035604201778 (the
  // published table of Garwood limits has 4.7954 and 18.390).
  const RateEstimate ten = poisson_rate(10, 5.0);
  EXPECT_NEAR(*ten.per_hour, 2.0, kTol);
  EXPECT_NEAR(*ten.low, 4.795388696132433 / 5.0, 1e-7);
  EXPECT_NEAR(*ten.high, 18.39035604201778 / 5.0, 1e-7);
}

TEST(PoissonRate, NoExposureHasNoRate) {
  const RateEstimate r = poisson_rate(3, 0.0);
  EXPECT_EQ(r.events, 3);
  EXPECT_FALSE(r.per_hour.has_value());
  EXPECT_FALSE(r.high.has_value());
  EXPECT_THROW(poisson_rate(-1, 1.0), std::invalid_argument);
  EXPECT_THROW(poisson_rate(1, -1.0), std::invalid_argument);
}

TEST(BinomialUpperTail, MatchesSumsOfTerms) {
  // P(X >= 8), X ~ Bin(10, 0.3): C(10,8) .3^8 .7^2 + C(10,9) .3^9 .7 + .3^10 = 0.0015903864.
  EXPECT_NEAR(binomial_upper_tail(10, 8, 0.3), 0.0015903864, 1e-12);
  // All of n in dual time: dual_share^n.
  EXPECT_NEAR(binomial_upper_tail(12, 12, 0.25), std::pow(0.25, 12), 1e-18);
  // P(X >= 2), X ~ Bin(4, 1/3) = 1 - (2/3)^4 - 4 (1/3)(2/3)^3 = 33/81.
  EXPECT_NEAR(binomial_upper_tail(4, 2, 1.0 / 3.0), 33.0 / 81.0, kTol);
}

TEST(BinomialUpperTail, EdgeCases) {
  EXPECT_EQ(binomial_upper_tail(5, 0, 0.5), 1.0);
  EXPECT_EQ(binomial_upper_tail(0, 0, 0.5), 1.0);
  EXPECT_EQ(binomial_upper_tail(5, 6, 0.5), 0.0);
  EXPECT_EQ(binomial_upper_tail(5, 1, 0.0), 0.0);  // zero dual time: no hang can land there
  EXPECT_EQ(binomial_upper_tail(5, 5, 1.0), 1.0);
  EXPECT_THROW(binomial_upper_tail(5, 1, 1.5), std::invalid_argument);
}

TEST(CompareRates, ExactConditionalTestAndInterval) {
  // a = 6 in 2 h, b = 1 in 3 h: n = 7, pi0 = 2/5. P(X <= 6) = 1 - .4^7, P(X >= 6) =
  // 7 (.4^6)(.6) + .4^7 = 0.0188416, so p = 2 * 0.0188416. Clopper-Pearson for 6 of 7:
  // [0.4212768029568048, 0.9963897031380995]; R = pi/(1-pi) * 3/2.
  const RateRatio r = compare_rates(6, 2.0, 1, 3.0);
  EXPECT_NEAR(*r.ratio, 9.0, kTol);
  EXPECT_NEAR(r.p_value, 0.0376832, 1e-9);
  EXPECT_NEAR(r.low, 1.0919126927411582, 1e-6);
  EXPECT_NEAR(*r.high, 413.9782992582998, 1e-3);
}

TEST(CompareRates, AllEventsInOneArm) {
  // 10 vs 0 with equal exposure: p = 2 * 0.5^10. The lower bound on pi solves
  // pi^10 = 0.025; the ratio is unbounded above.
  const RateRatio r = compare_rates(10, 1.0, 0, 1.0);
  EXPECT_NEAR(r.p_value, 2.0 * std::pow(0.5, 10), 1e-12);
  const double pi_low = std::pow(0.025, 0.1);
  EXPECT_NEAR(r.low, pi_low / (1.0 - pi_low), 1e-7);
  EXPECT_FALSE(r.ratio.has_value());
  EXPECT_FALSE(r.high.has_value());

  // The mirror image: ratio 0, upper bound (1 - pi_low) / pi_low.
  const RateRatio mirror = compare_rates(0, 1.0, 10, 1.0);
  EXPECT_EQ(*mirror.ratio, 0.0);
  EXPECT_EQ(mirror.low, 0.0);
  EXPECT_NEAR(*mirror.high, (1.0 - pi_low) / pi_low, 1e-7);
  EXPECT_NEAR(mirror.p_value, r.p_value, 1e-12);
}

TEST(CompareRates, NothingToCompare) {
  const RateRatio none = compare_rates(0, 1.0, 0, 1.0);
  EXPECT_FALSE(none.ratio.has_value());
  EXPECT_EQ(none.p_value, 1.0);
  EXPECT_FALSE(compare_rates(3, 0.0, 1, 1.0).ratio.has_value());
  // Equal rates: the observed split is the most likely one, p is 1 (capped).
  EXPECT_EQ(compare_rates(5, 1.0, 5, 1.0).p_value, 1.0);
}

}  // namespace
}  // namespace baton
