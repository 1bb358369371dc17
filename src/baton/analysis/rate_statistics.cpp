#include "baton/analysis/rate_statistics.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <stdexcept>

namespace baton {
namespace {

namespace bm = boost::math;

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw std::invalid_argument("confidence must be between 0 and 1");
  }
}

}  // namespace

RateEstimate poisson_rate(std::int64_t events, double hours, double confidence) {
  check_confidence(confidence);
  if (events < 0 || !(hours >= 0.0)) {
    throw std::invalid_argument("event counts and hours must not be negative");
  }
  RateEstimate r{.events = events,
                 .hours = hours,
                 .per_hour = std::nullopt,
                 .low = std::nullopt,
                 .high = std::nullopt};
  if (hours == 0.0) return r;
  const double alpha = 1.0 - confidence;
  const auto k = static_cast<double>(events);
  const double low = events == 0 ? 0.0 : bm::quantile(bm::chi_squared(2.0 * k), alpha / 2.0) / 2.0;
  const double high = bm::quantile(bm::chi_squared(2.0 * k + 2.0), 1.0 - alpha / 2.0) / 2.0;
  r.per_hour = k / hours;
  r.low = low / hours;
  r.high = high / hours;
  return r;
}

double binomial_upper_tail(std::int64_t n, std::int64_t k, double p) {
  if (n < 0 || !(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument("binomial: need n >= 0 and p in [0, 1]");
  }
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  // Boost rejects the degenerate p at the ends of [0, 1] for some functions: all n
  // trials succeed when p == 1 and none does when p == 0.
  if (p == 0.0) return 0.0;
  if (p == 1.0) return 1.0;
  const bm::binomial dist(static_cast<double>(n), p);
  return bm::cdf(bm::complement(dist, static_cast<double>(k - 1)));
}

RateRatio compare_rates(std::int64_t events_a, double hours_a, std::int64_t events_b,
                        double hours_b, double confidence) {
  check_confidence(confidence);
  if (events_a < 0 || events_b < 0 || !(hours_a >= 0.0) || !(hours_b >= 0.0)) {
    throw std::invalid_argument("event counts and hours must not be negative");
  }
  RateRatio result;
  const std::int64_t n = events_a + events_b;
  if (n == 0 || hours_a == 0.0 || hours_b == 0.0) return result;  // nothing to compare
  const double share_a = hours_a / (hours_a + hours_b);
  const double exposure_odds = hours_b / hours_a;
  const auto trials = static_cast<double>(n);
  const auto successes = static_cast<double>(events_a);
  const double alpha = 1.0 - confidence;

  const double lower_tail = 1.0 - binomial_upper_tail(n, events_a + 1, share_a);  // P(X <= a)
  const double upper_tail = binomial_upper_tail(n, events_a, share_a);            // P(X >= a)
  result.p_value = std::min(1.0, 2.0 * std::min(lower_tail, upper_tail));

  if (events_b > 0) result.ratio = (successes / static_cast<double>(events_b)) * exposure_odds;
  const double pi_low =
      events_a == 0 ? 0.0 : bm::binomial::find_lower_bound_on_p(trials, successes, alpha / 2.0);
  const double pi_high =
      events_b == 0 ? 1.0 : bm::binomial::find_upper_bound_on_p(trials, successes, alpha / 2.0);
  result.low = pi_low / (1.0 - pi_low) * exposure_odds;
  if (pi_high < 1.0) result.high = pi_high / (1.0 - pi_high) * exposure_odds;
  return result;
}

}  // namespace baton
