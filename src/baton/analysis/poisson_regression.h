// Poisson regression of event counts on exposure: log E[events] = log(hours) + b0 + X b,
// fitted by iteratively reweighted least squares (Eigen), as R's glm(events ~ ... +
// offset(log(hours)), family = poisson) does. What it gives beside the fit, in plain
// terms where the data cannot say more:
//   - each factor's rate ratio exp(b), with its Wald p-value and a profile-likelihood
//     interval (exact enough when counts are small, and one-sided when a level saw no
//     event: the ratio is then 0 or unbounded, never a meaningless huge estimate, also
//     where no single column shows it: a factor's reference level without events);
//   - no estimate at all, said in words, where the data bound a ratio on neither side
//     (no events anywhere: there is no rate to compare);
//   - a likelihood-ratio test per term (a factor of one or more columns), as drop1();
//   - columns that are linear combinations of the others in the exposure (two factors
//     always on together) are named and left out, as R's NA coefficients, with a
//     statement that the data cannot separate them.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton {

// One stratum of exposure: the covariates there (one per column; 0/1 for a factor's
// level), its events and hours. Strata of zero hours carry no information.
struct PoissonCell {
  std::vector<double> covariates;
  std::int64_t events = 0;
  double hours = 0.0;
};

// A factor: the columns tested together (one for a two-level factor).
struct PoissonTerm {
  std::string name;
  std::vector<std::size_t> columns;
  std::string reference;  // the level its columns are compared with, in words ("busy=1")
};

struct PoissonDesign {
  std::vector<std::string> columns;  // covariate names; the intercept is implicit
  std::vector<PoissonTerm> terms;
  std::vector<PoissonCell> cells;
};

struct PoissonCoefficient {
  std::string name;       // "(intercept)" first: log events per hour at all covariates 0
  bool estimable = true;  // false: collinear with others, left out of the fit
  // The maximum-likelihood estimate; nullopt when it is infinite (no event on one side).
  std::optional<double> estimate;
  std::optional<double> std_error;
  std::optional<double> wald_p;
  // exp(estimate) and its profile-likelihood interval; nullopt ends are 0 or unbounded.
  std::optional<double> ratio;
  std::optional<double> low;
  std::optional<double> high;
  // Why the data give neither an estimate nor a bound ("no hangs at all"); empty when
  // they give one. The numbers above are then all nullopt.
  std::string no_estimate;
};

struct PoissonTermTest {
  std::string name;
  int df = 0;              // the term's estimable columns
  double statistic = 0.0;  // deviance without the term minus with it
  double p_value = 1.0;    // chi-square upper tail
};

struct PoissonFit {
  std::vector<PoissonCoefficient> coefficients;
  std::vector<PoissonTermTest> tests;
  double deviance = 0.0;
  int df_residual = 0;
  int iterations = 0;
  // Plain statements of what the data cannot separate or bound.
  std::vector<std::string> notes;
};

// Fits `design`. std::invalid_argument for a cell whose covariates do not match the
// columns, negative hours or events, events in a cell of zero hours, or no cell with
// hours at all.
PoissonFit fit_poisson(const PoissonDesign& design, double confidence = 0.95);

}  // namespace baton
