// Exact statistics of event counts over exposure time: Poisson rates with Garwood
// confidence intervals, the binomial tail of the uniform-placement test, and the exact
// conditional test of a rate ratio (given the total count, the split between two arms is
// binomial in their exposure shares). The distributions come from Boost.Math.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

namespace baton {

struct RateEstimate {
  std::int64_t events = 0;
  double hours = 0.0;
  // Per hour; empty when there is no exposure (hours == 0).
  std::optional<double> per_hour;
  std::optional<double> low;  // Garwood (exact) confidence interval
  std::optional<double> high;
};

// Events per hour over `hours` of exposure, with the exact central interval at
// `confidence` (0.95 by default): [chi2(a/2; 2k)/2, chi2(1-a/2; 2k+2)/2] / hours.
RateEstimate poisson_rate(std::int64_t events, double hours, double confidence = 0.95);

// P(X >= k) for X ~ Binomial(n, p). 1 when k <= 0; 0 when k > n.
double binomial_upper_tail(std::int64_t n, std::int64_t k, double p);

struct RateRatio {
  // rate_a / rate_b; empty when undefined (no event at all, an arm without exposure) or
  // unbounded (b saw no event). `high` is empty when unbounded.
  std::optional<double> ratio;
  double low = 0.0;
  std::optional<double> high;
  double p_value = 1.0;  // two-sided, against equal rates
};

// The exact conditional test: given n = a + b, a ~ Binomial(n, pi) with
// pi = R*Ha / (R*Ha + Hb). The p-value doubles the smaller tail at R = 1 (capped at 1);
// the interval maps Clopper-Pearson bounds on pi to R.
RateRatio compare_rates(std::int64_t events_a, double hours_a, std::int64_t events_b,
                        double hours_b, double confidence = 0.95);

}  // namespace baton
