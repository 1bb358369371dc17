#include "baton/analysis/ab_plan.h"

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/poisson.hpp>
#include <stdexcept>

namespace baton {
namespace {

namespace bm = boost::math;

void check(const Baseline& baseline, double reduction) {
  if (baseline.events < 0 || !(baseline.hours > 0.0)) {
    throw std::invalid_argument("the baseline needs a non-negative event count and hours > 0");
  }
  if (!(reduction >= 1.0)) throw std::invalid_argument("the reduction factor must be >= 1");
}

void check_alpha(double alpha) {
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("alpha must be in (0, 1)");
}

}  // namespace

// Under H0 (rate_fix = rate_base / K), given all N events, the fix's count is
// Binomial(N, pi) with pi = (T/K) / (T/K + H). Zero events has probability (1 - pi)^N;
// the largest pi with that still >= alpha is the Clopper-Pearson upper bound for 0 of N.
// With the rate known, zero events in T hours has probability exp(-N/H * T/K); the mean
// at which that equals alpha is Garwood's one-sided upper bound for a count of 0.
HoursNeeded hours_needed(const Baseline& baseline, double alpha, double reduction) {
  check(baseline, reduction);
  check_alpha(alpha);
  HoursNeeded needed;
  if (baseline.events == 0) return needed;
  const auto n = static_cast<double>(baseline.events);
  const double pi = bm::binomial::find_upper_bound_on_p(n, 0.0, alpha);
  needed.conditional = reduction * baseline.hours * pi / (1.0 - pi);
  const double mean = bm::quantile(bm::chi_squared(2.0), 1.0 - alpha) / 2.0;
  needed.known_rate = reduction * mean * baseline.hours / n;
  return needed;
}

PValues p_values_so_far(const Baseline& baseline, double hours_run, double reduction) {
  check(baseline, reduction);
  if (!(hours_run >= 0.0)) throw std::invalid_argument("hours run must not be negative");
  PValues p;
  if (baseline.events == 0 || hours_run == 0.0) return p;
  const double fix_exposure = hours_run / reduction;
  const double pi = fix_exposure / (fix_exposure + baseline.hours);
  p.conditional = bm::pdf(bm::binomial(static_cast<double>(baseline.events), pi), 0.0);
  const double mean = static_cast<double>(baseline.events) / baseline.hours * fix_exposure;
  p.known_rate = bm::pdf(bm::poisson(mean), 0.0);
  return p;
}

}  // namespace baton
