#include "baton/analysis/rate_ratio_mixture.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace baton {
namespace {

// The prior's grid: +-6 standard deviations (the mass left out, 2e-9, is renormalised) in
// 240 steps. Any grid gives an exact martingale; a fine one approximates the normal.
constexpr double kGridHalfWidthSd = 6.0;
constexpr int kGridSteps = 240;
// Beyond this |log R| (R below 1e-300 or above 1e300) a bound counts as 0 or unbounded.
constexpr double kLogRatioLimit = 690.0;

// log(1 / (1 + exp(-x))) without overflow on either side.
double log_sigmoid(double x) {
  return x >= 0.0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}

double sigmoid(double x) {
  return x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

// One pair's log-likelihood at log R = theta: B's count is the successes, A's the failures.
double pair_log_likelihood(double theta, double log_exposure_odds, double count_a, double count_b) {
  const double x = theta + log_exposure_odds;
  double l = 0.0;
  if (count_b > 0.0) l += count_b * log_sigmoid(x);
  if (count_a > 0.0) l += count_a * log_sigmoid(-x);
  return l;
}

double log_sum_exp(const std::vector<double>& terms) {
  const double top = *std::max_element(terms.begin(), terms.end());
  if (!std::isfinite(top)) return top;
  double sum = 0.0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

void check_pair(double hours_a, double count_a, double hours_b, double count_b) {
  if (!(hours_a > 0.0 && std::isfinite(hours_a)) || !(hours_b > 0.0 && std::isfinite(hours_b))) {
    throw std::invalid_argument("a pair's hours must be finite and > 0");
  }
  if (!(count_a >= 0.0 && std::isfinite(count_a)) || !(count_b >= 0.0 && std::isfinite(count_b))) {
    throw std::invalid_argument("a pair's counts must be finite and >= 0");
  }
}

}  // namespace

RateRatioMixture::RateRatioMixture(double prior_sd_log_ratio) {
  if (!(prior_sd_log_ratio > 0.0 && std::isfinite(prior_sd_log_ratio))) {
    throw std::invalid_argument("the prior's standard deviation of log R must be finite and > 0");
  }
  const double half = kGridHalfWidthSd * prior_sd_log_ratio;
  const double step = 2.0 * half / kGridSteps;
  for (int j = 0; j <= kGridSteps; ++j) {
    const double theta = -half + j * step;
    grid_.push_back(theta);
    const double z = theta / prior_sd_log_ratio;
    log_weight_.push_back(-0.5 * z * z);
  }
  const double norm = log_sum_exp(log_weight_);
  for (double& w : log_weight_) w -= norm;
  grid_log_likelihood_.assign(grid_.size(), 0.0);
}

void RateRatioMixture::add_pair(double hours_a, double count_a, double hours_b, double count_b) {
  check_pair(hours_a, count_a, hours_b, count_b);
  if (count_a + count_b == 0.0) return;  // a pair without events says nothing about R
  const Pair pair{
      .log_exposure_odds = std::log(hours_b / hours_a), .count_a = count_a, .count_b = count_b};
  for (std::size_t j = 0; j < grid_.size(); ++j) {
    grid_log_likelihood_[j] +=
        pair_log_likelihood(grid_[j], pair.log_exposure_odds, pair.count_a, pair.count_b);
  }
  pairs_.push_back(pair);
  log_likelihood_at_one_ +=
      pair_log_likelihood(0.0, pair.log_exposure_odds, pair.count_a, pair.count_b);
  count_a_ += count_a;
  count_b_ += count_b;
}

double RateRatioMixture::log_likelihood(double log_ratio) const {
  double l = 0.0;
  for (const Pair& p : pairs_) {
    l += pair_log_likelihood(log_ratio, p.log_exposure_odds, p.count_a, p.count_b);
  }
  return l;
}

double RateRatioMixture::score(double log_ratio) const {
  double s = 0.0;
  for (const Pair& p : pairs_) {
    s += p.count_b - (p.count_a + p.count_b) * sigmoid(log_ratio + p.log_exposure_odds);
  }
  return s;
}

double RateRatioMixture::log_mixture() const {
  std::vector<double> terms(grid_.size());
  for (std::size_t j = 0; j < grid_.size(); ++j)
    terms[j] = log_weight_[j] + grid_log_likelihood_[j];
  return log_sum_exp(terms);
}

double RateRatioMixture::log_e_value(double ratio) const {
  if (!(ratio > 0.0 && std::isfinite(ratio))) {
    throw std::invalid_argument("the ratio under test must be finite and > 0");
  }
  return log_mixture() - (ratio == 1.0 ? log_likelihood_at_one_ : log_likelihood(std::log(ratio)));
}

double RateRatioMixture::log_e_value_with(double hours_a, double count_a, double hours_b,
                                          double count_b) const {
  check_pair(hours_a, count_a, hours_b, count_b);
  const double odds = std::log(hours_b / hours_a);
  std::vector<double> terms(grid_.size());
  for (std::size_t j = 0; j < grid_.size(); ++j) {
    terms[j] = log_weight_[j] + grid_log_likelihood_[j] +
               pair_log_likelihood(grid_[j], odds, count_a, count_b);
  }
  return log_sum_exp(terms) - log_likelihood(0.0) -
         pair_log_likelihood(0.0, odds, count_a, count_b);
}

// Walks from `from` (inside the set) by doubling steps until the log-likelihood falls below
// the cutoff, then bisects; the log-likelihood is concave, so the set is one interval.
double RateRatioMixture::bound_beyond(double from, double step, double cutoff) const {
  double inside = from;
  double outside = from + step;
  while (log_likelihood(outside) >= cutoff) {
    inside = outside;
    step *= 2.0;
    outside = from + step;
    if (std::abs(outside) > kLogRatioLimit) return outside;
  }
  for (int i = 0; i < 200 && std::abs(outside - inside) > 1e-12; ++i) {
    const double mid = 0.5 * (inside + outside);
    (log_likelihood(mid) >= cutoff ? inside : outside) = mid;
  }
  return 0.5 * (inside + outside);
}

RatioBounds RateRatioMixture::bounds(double alpha) const {
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("alpha must be in (0, 1)");
  const double cutoff = log_mixture() + std::log(alpha);
  // The best grid point is inside: the mixture never exceeds its largest term.
  const auto best = std::max_element(grid_log_likelihood_.begin(), grid_log_likelihood_.end());
  const double start = grid_[static_cast<std::size_t>(best - grid_log_likelihood_.begin())];
  RatioBounds b;
  if (count_b_ > 0.0) {
    const double low = bound_beyond(start, -1.0, cutoff);
    b.low = low < -kLogRatioLimit ? 0.0 : std::exp(low);
  }
  if (count_a_ > 0.0) {
    const double high = bound_beyond(start, 1.0, cutoff);
    if (high <= kLogRatioLimit) b.high = std::exp(high);
  }
  return b;
}

std::optional<double> RateRatioMixture::estimate() const {
  if (count_a_ == 0.0) return std::nullopt;  // no A event: unbounded, or nothing at all
  if (count_b_ == 0.0) return 0.0;
  // The score falls from +count_b to -count_a as log R rises: bracket its root, bisect.
  double low = -1.0;
  double high = 1.0;
  while (score(low) < 0.0) low *= 2.0;
  while (score(high) > 0.0) high *= 2.0;
  for (int i = 0; i < 200 && high - low > 1e-13; ++i) {
    const double mid = 0.5 * (low + high);
    (score(mid) > 0.0 ? low : high) = mid;
  }
  return std::exp(0.5 * (low + high));
}

}  // namespace baton
