// The mixture likelihood-ratio martingale behind the live experiment's verdict: a test of
// R = rate_B / rate_A that may be looked at after every new piece of data (an always-valid
// p-value and a confidence sequence). Data come as pairs of exposures, one stretch of arm A
// and one of arm B; given a pair's total m, B's count is Binomial(m, pi) with
// pi = R*hb / (R*hb + ha) whatever the common rate, so the unknown baseline is conditioned
// away as in compare_rates. The product of the pairs' likelihood ratios, averaged over a
// prior on log R fixed in advance (a normal, on a fine grid), is a non-negative martingale
// with mean 1 under any true R0; by Ville's inequality it ever reaches 1/alpha with
// probability at most alpha. So 1/M is a p-value valid at any stopping time, and the R0
// that M does not reject form a confidence sequence.
// Thread-safety: a value type without shared state; one instance per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace baton {

struct RatioBounds {
  double low = 0.0;            // 0 when B saw nothing: R may be 0
  std::optional<double> high;  // empty when unbounded (A saw nothing)
};

class RateRatioMixture {
 public:
  // Normal prior on log R with this standard deviation (> 0), centred on 0 (no difference).
  explicit RateRatioMixture(double prior_sd_log_ratio);

  // One A stretch and one B stretch, each hours > 0 and counts >= 0. Counts may be
  // fractional only for projections (hours still needed); the test itself gets whole ones.
  void add_pair(double hours_a, double count_a, double hours_b, double count_b);

  // log M for H0: R = ratio (> 0). log(1/alpha) or more rejects it.
  double log_e_value(double ratio) const;
  // log M at R = 1 with one more (hypothetical) pair added, without changing this one.
  double log_e_value_with(double hours_a, double count_a, double hours_b, double count_b) const;
  // The ratios not rejected at alpha now: an interval, since the log-likelihood is concave
  // in log R.
  RatioBounds bounds(double alpha) const;
  // The conditional maximum-likelihood estimate; empty when A saw nothing (unbounded) or
  // no pair holds an event. 0 when B saw nothing.
  std::optional<double> estimate() const;

  double count_a() const { return count_a_; }
  double count_b() const { return count_b_; }

 private:
  struct Pair {
    double log_exposure_odds;  // log(hb / ha)
    double count_a;
    double count_b;
  };
  double log_likelihood(double log_ratio) const;
  double score(double log_ratio) const;  // derivative of log_likelihood
  double log_mixture() const;            // log sum_j w_j exp(l(theta_j))
  double bound_beyond(double from, double step, double cutoff) const;

  std::vector<double> grid_;        // log R
  std::vector<double> log_weight_;  // log prior mass of each grid point (sums to 1)
  std::vector<double> grid_log_likelihood_;
  std::vector<Pair> pairs_;  // pairs with at least one event
  double log_likelihood_at_one_ = 0.0;  // at R = 1, kept as pairs come (each look needs it)
  double count_a_ = 0.0;
  double count_b_ = 0.0;
};

}  // namespace baton
