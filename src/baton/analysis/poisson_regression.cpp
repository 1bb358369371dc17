#include "baton/analysis/poisson_regression.h"

#include <Eigen/Dense>
#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <stdexcept>

namespace baton {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr int kMaxIterations = 100;
constexpr double kTolerance = 1e-10;  // relative change of the deviance, as glm's epsilon
constexpr double kFarAway = 40.0;     // a log rate ratio past e^40 is no bound
constexpr double kRanOff = 20.0;      // how far ran_off() looks past an estimate

// The strata with exposure: the design with its intercept column first, counts, log hours.
struct Data {
  MatrixXd x;
  VectorXd y;
  VectorXd offset;
};

Data data_of(const PoissonDesign& design) {
  const std::size_t p = design.columns.size();
  std::vector<const PoissonCell*> used;
  for (const PoissonCell& cell : design.cells) {
    if (cell.covariates.size() != p) {
      throw std::invalid_argument("a cell has " + std::to_string(cell.covariates.size()) +
                                  " covariates for " + std::to_string(p) + " columns");
    }
    if (cell.events < 0 || !(cell.hours >= 0.0) || !std::isfinite(cell.hours)) {
      throw std::invalid_argument("a cell has negative events or hours");
    }
    if (cell.hours == 0.0 && cell.events > 0) {
      throw std::invalid_argument("a cell has events but no exposure");
    }
    if (cell.hours > 0.0) used.push_back(&cell);
  }
  if (used.empty()) throw std::invalid_argument("no cell has exposure: there is nothing to fit");
  const auto n = static_cast<Eigen::Index>(used.size());
  Data d{
      .x = MatrixXd(n, static_cast<Eigen::Index>(p + 1)), .y = VectorXd(n), .offset = VectorXd(n)};
  for (Eigen::Index i = 0; i < d.x.rows(); ++i) {
    const PoissonCell& cell = *used[static_cast<std::size_t>(i)];
    d.x(i, 0) = 1.0;
    for (std::size_t j = 0; j < p; ++j)
      d.x(i, static_cast<Eigen::Index>(j + 1)) = cell.covariates[j];
    d.y(i) = static_cast<double>(cell.events);
    d.offset(i) = std::log(cell.hours);
  }
  return d;
}

double deviance_of(const VectorXd& y, const VectorXd& mu) {
  double sum = 0.0;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    sum += (y(i) > 0.0 ? y(i) * std::log(y(i) / mu(i)) : 0.0) - (y(i) - mu(i));
  }
  return 2.0 * sum;
}

struct Irls {
  VectorXd beta;
  MatrixXd information;  // X' W X at the estimate
  double deviance = 0.0;
  int iterations = 0;
};

// glm's IRLS for the log link: start at mu = y + 0.1, stop when the deviance settles.
Irls irls(const MatrixXd& x, const VectorXd& y, const VectorXd& offset) {
  VectorXd mu = (y.array() + 0.1).matrix();
  VectorXd eta = mu.array().log().matrix();
  double deviance = deviance_of(y, mu);
  Irls fit;
  fit.beta = VectorXd::Zero(x.cols());
  for (fit.iterations = 1; fit.iterations <= kMaxIterations; ++fit.iterations) {
    const VectorXd z = eta - offset + ((y - mu).array() / mu.array()).matrix();
    fit.information = x.transpose() * mu.asDiagonal() * x;
    if (x.cols() > 0) {
      fit.beta = fit.information.ldlt().solve(x.transpose() * (mu.array() * z.array()).matrix());
    }
    eta = x * fit.beta + offset;
    mu = eta.array().exp().matrix();
    const double next = deviance_of(y, mu);
    const bool settled = std::abs(next - deviance) / (std::abs(next) + 0.1) < kTolerance;
    deviance = next;
    if (settled) break;
  }
  fit.information = x.transpose() * mu.asDiagonal() * x;
  fit.deviance = deviance;
  return fit;
}

MatrixXd columns_of(const MatrixXd& x, const std::vector<Eigen::Index>& keep) {
  MatrixXd out(x.rows(), static_cast<Eigen::Index>(keep.size()));
  for (std::size_t k = 0; k < keep.size(); ++k)
    out.col(static_cast<Eigen::Index>(k)) = x.col(keep[k]);
  return out;
}

// The columns kept in order, each one only if it is not a combination of those before it
// (R's aliasing: the later of two collinear columns goes).
std::vector<Eigen::Index> independent_columns(const MatrixXd& x) {
  std::vector<Eigen::Index> kept;
  for (Eigen::Index j = 0; j < x.cols(); ++j) {
    std::vector<Eigen::Index> trial = kept;
    trial.push_back(j);
    Eigen::ColPivHouseholderQR<MatrixXd> qr(columns_of(x, trial));
    qr.setThreshold(1e-9);
    if (qr.rank() == static_cast<Eigen::Index>(trial.size())) kept = std::move(trial);
  }
  return kept;
}

std::string name_of(const PoissonDesign& design, Eigen::Index column) {
  return column == 0 ? "(intercept)" : design.columns[static_cast<std::size_t>(column - 1)];
}

// The kept columns that `column` is a combination of, for the note that says so.
std::string aliases(const PoissonDesign& design, const MatrixXd& x,
                    const std::vector<Eigen::Index>& kept, Eigen::Index column) {
  const VectorXd a = columns_of(x, kept).colPivHouseholderQr().solve(x.col(column));
  std::string names;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (std::abs(a(static_cast<Eigen::Index>(k))) < 1e-6) continue;
    names += (names.empty() ? "'" : ", '") + name_of(design, kept[k]) + "'";
  }
  return names.empty() ? "nothing (it is zero wherever there was exposure)" : names;
}

// The direction in which an indicator's estimate is infinite: -1 when no event fell where
// it is 1, +1 when none fell where it is 0 (and some did where it is 1), else 0.
int infinite_direction(const Data& d, Eigen::Index column) {
  double with = 0.0, without = 0.0, exposed = 0.0;
  for (Eigen::Index i = 0; i < d.x.rows(); ++i) {
    const double v = d.x(i, column);
    if (v != 0.0 && v != 1.0) return 0;
    (v == 1.0 ? with : without) += d.y(i);
    exposed += v;
  }
  if (column == 0 || exposed == 0.0) return 0;
  if (with == 0.0) return -1;
  if (without == 0.0 && exposed < static_cast<double>(d.x.rows())) return +1;
  return 0;
}

// The deviance with coefficient `k` of the kept columns fixed at `value`.
double profile_deviance(const Data& d, const std::vector<Eigen::Index>& kept, std::size_t k,
                        double value) {
  std::vector<Eigen::Index> others = kept;
  others.erase(others.begin() + static_cast<std::ptrdiff_t>(k));
  const VectorXd offset = d.offset + value * d.x.col(kept[k]);
  return irls(columns_of(d.x, others), d.y, offset).deviance;
}

// Whether coefficient `k` ran off to infinity with the fit where no single column shows it
// (a factor's reference level without events, say): moving it further from `beta` in
// direction `sign` leaves the deviance as it is, the others making up for it.
bool ran_off(const Data& d, const std::vector<Eigen::Index>& kept, std::size_t k, double beta,
             int sign, double deviance) {
  return profile_deviance(d, kept, k, beta + sign * kRanOff) - deviance < 1e-3;
}

// Where the profile deviance reaches `target` going from `from` in direction `sign`;
// nullopt when it does not within `reach`.
std::optional<double> profile_bound(const Data& d, const std::vector<Eigen::Index>& kept,
                                    std::size_t k, double from, double target, int sign,
                                    double step, double reach = kFarAway) {
  double inside = from;
  double outside = from;
  for (step = std::max(step, 1e-3);; step *= 2.0) {
    outside = from + sign * step;
    if (std::abs(outside - from) > reach) return std::nullopt;
    if (profile_deviance(d, kept, k, outside) >= target) break;
    inside = outside;
  }
  for (int i = 0; i < 100 && std::abs(outside - inside) > 1e-10; ++i) {
    const double mid = 0.5 * (inside + outside);
    (profile_deviance(d, kept, k, mid) >= target ? outside : inside) = mid;
  }
  return 0.5 * (inside + outside);
}

}  // namespace

PoissonFit fit_poisson(const PoissonDesign& design, double confidence) {
  const Data d = data_of(design);
  PoissonFit result;
  const std::vector<Eigen::Index> kept = independent_columns(d.x);
  const Irls full = irls(columns_of(d.x, kept), d.y, d.offset);
  result.deviance = full.deviance;
  result.iterations = full.iterations;
  result.df_residual = static_cast<int>(d.x.rows()) - static_cast<int>(kept.size());
  if (d.y.sum() == 0.0) result.notes.push_back("no events: the rates cannot be compared");

  const MatrixXd covariance = full.information.ldlt().solve(
      MatrixXd::Identity(full.information.rows(), full.information.cols()));
  // No event where an indicator is 0: the rate at the reference (all covariates 0) is 0.
  const bool no_events = d.y.sum() == 0.0;
  bool reference_rate_zero = no_events || ran_off(d, kept, 0, full.beta(0), -1, full.deviance);
  for (const Eigen::Index column : kept) reference_rate_zero |= infinite_direction(d, column) > 0;
  const boost::math::normal normal;
  const double rise = boost::math::quantile(boost::math::chi_squared(1.0), confidence);
  for (Eigen::Index column = 0; column < d.x.cols(); ++column) {
    PoissonCoefficient c;
    c.name = name_of(design, column);
    const auto at = std::find(kept.begin(), kept.end(), column);
    if (at == kept.end()) {
      c.estimable = false;
      result.notes.push_back("'" + c.name + "' cannot be separated from " +
                             aliases(design, d.x, kept, column) +
                             " in this exposure: left out, its effect counted in theirs");
      result.coefficients.push_back(std::move(c));
      continue;
    }
    const auto k = static_cast<std::size_t>(at - kept.begin());
    const double beta = full.beta(static_cast<Eigen::Index>(k));
    const double se =
        std::sqrt(covariance(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)));
    int infinite = column == 0 ? (reference_rate_zero ? -1 : 0) : infinite_direction(d, column);
    // Infinite where no single column shows it (a reference level without events, say).
    const int side = beta > 0 ? +1 : -1;
    const bool hidden = column != 0 && infinite == 0 && !no_events &&
                        ran_off(d, kept, k, beta, side, full.deviance);
    if (hidden) infinite = side;
    const double target = full.deviance + rise;
    if (no_events && column != 0) {
      c.no_estimate = "no hangs at all: no rates to compare";
    } else if (infinite != 0 && column == 0) {
      c.high = profile_bound(d, kept, k, -kFarAway, target, +1, 1.0, 2.0 * kFarAway);
      if (!c.high) c.no_estimate = "no hangs at the reference, and no bound on its rate";
    } else if (infinite != 0) {
      result.notes.push_back(
          (hidden ? "no finite estimate for '" + c.name +
                        "' given the other factors (a level without events)"
                  : "no events " + std::string(infinite < 0 ? "with" : "without") + " '" +
                        c.name + "'") +
          ": its rate ratio is " + (infinite < 0 ? "0" : "unbounded") +
          ", only one bound is known");
      const double edge = infinite * kFarAway;
      (infinite < 0 ? c.high : c.low) =
          profile_bound(d, kept, k, edge, target, -infinite, 1.0, 2.0 * kFarAway);
    } else {
      c.low = profile_bound(d, kept, k, beta, target, -1, se);
      c.high = profile_bound(d, kept, k, beta, target, +1, se);
      if (!c.low && !c.high) {
        c.no_estimate = "the data bound it on neither side";
      } else {
        c.estimate = beta;
        c.std_error = se;
        c.wald_p = 2.0 * boost::math::cdf(boost::math::complement(normal, std::abs(beta / se)));
      }
    }
    if (c.estimate) c.ratio = std::exp(*c.estimate);
    if (c.low) c.low = std::exp(*c.low);
    if (c.high) c.high = std::exp(*c.high);
    if (infinite < 0 && c.no_estimate.empty()) c.ratio = 0.0;
    result.coefficients.push_back(std::move(c));
  }

  // A term's test compares the fit without its columns (the others' aliasing found
  // again, as a model fitted without them would) with the full one, as anova() does.
  for (const PoissonTerm& term : design.terms) {
    std::vector<Eigen::Index> rest;
    for (Eigen::Index column = 0; column < d.x.cols(); ++column) {
      if (column == 0 || std::find(term.columns.begin(), term.columns.end(),
                                   static_cast<std::size_t>(column - 1)) == term.columns.end()) {
        rest.push_back(column);
      }
    }
    const MatrixXd reduced = columns_of(d.x, rest);
    const std::vector<Eigen::Index> rest_kept = independent_columns(reduced);
    PoissonTermTest test;
    test.name = term.name;
    test.df = static_cast<int>(kept.size()) - static_cast<int>(rest_kept.size());
    if (test.df > 0) {
      test.statistic = std::max(
          0.0, irls(columns_of(reduced, rest_kept), d.y, d.offset).deviance - full.deviance);
      test.p_value = boost::math::cdf(
          boost::math::complement(boost::math::chi_squared(test.df), test.statistic));
    }
    result.tests.push_back(std::move(test));
  }
  return result;
}

}  // namespace baton
