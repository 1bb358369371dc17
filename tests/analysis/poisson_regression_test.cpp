// Poisson regression against R's glm on the tables of tests/data/analysis/poisson_glm.json
// (scripts/reference/make_poisson_reference.R: coefficients, standard errors, deviance,
// the likelihood-ratio test of each term, and profile-likelihood bounds found with
// uniroot), and on simulated exposure where the hangs depend on one factor only.
#include "baton/analysis/poisson_regression.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

namespace baton {
namespace {

using nlohmann::json;

std::vector<std::string> strings_of(const json& value) {
  if (value.is_string()) return {value.get<std::string>()};
  return value.get<std::vector<std::string>>();
}

PoissonDesign design_of(const json& c) {
  PoissonDesign design;
  design.columns = strings_of(c["columns"]);
  for (const json& term : c["terms"]) {
    PoissonTerm t{.name = term["name"].get<std::string>(), .columns = {}};
    for (const std::string& column : strings_of(term["columns"])) {
      const auto at = std::find(design.columns.begin(), design.columns.end(), column);
      t.columns.push_back(static_cast<std::size_t>(at - design.columns.begin()));
    }
    design.terms.push_back(std::move(t));
  }
  for (const json& cell : c["cells"]) {
    design.cells.push_back({cell["covariates"].get<std::vector<double>>(),
                            cell["events"].get<std::int64_t>(), cell["hours"].get<double>()});
  }
  return design;
}

// Log-scale bounds: R's uniroot and our bisection both stop far below this.
constexpr double kBoundTolerance = 1e-5;

class AgainstR : public ::testing::TestWithParam<std::size_t> {
 protected:
  static const json& cases() {
    static const json all = [] {
      std::ifstream in(std::string(BATON_TEST_DATA) + "/analysis/poisson_glm.json");
      return json::parse(in);
    }();
    return all;
  }
};

TEST_P(AgainstR, CoefficientsTestsAndProfileBoundsMatchGlm) {
  const json& r = cases().at(GetParam());
  SCOPED_TRACE(r["name"].get<std::string>());
  const PoissonFit fit = fit_poisson(design_of(r));
  EXPECT_NEAR(fit.deviance, r["deviance"].get<double>(), 1e-7);
  EXPECT_EQ(fit.df_residual, r["df_residual"].get<int>());
  ASSERT_EQ(fit.coefficients.size(), r["estimate"].size());
  for (std::size_t j = 0; j < fit.coefficients.size(); ++j) {
    const PoissonCoefficient& c = fit.coefficients[j];
    SCOPED_TRACE(c.name);
    const json& estimate = r["estimate"][j];
    if (estimate.is_null()) {  // aliased in R
      EXPECT_FALSE(c.estimable);
      continue;
    }
    const bool infinite = std::abs(estimate.get<double>()) > 15;  // R's stand-in for +-inf
    if (infinite) {
      EXPECT_FALSE(c.estimate.has_value());
    } else {
      ASSERT_TRUE(c.estimate.has_value());
      EXPECT_NEAR(*c.estimate, estimate.get<double>(), 1e-6);
      // R stops at a relative change of 1e-8 and takes the standard errors from the
      // weights of its last iteration, we from the converged ones: 3e-6 apart at most.
      EXPECT_NEAR(*c.std_error, r["std_error"][j].get<double>(), 1e-5 * *c.std_error);
      EXPECT_NEAR(*c.ratio, std::exp(estimate.get<double>()), 1e-6 * *c.ratio);
    }
    for (const auto& [key, ours] : {std::pair{"exact_low", c.low}, {"exact_high", c.high}}) {
      const json& bound = r[key][j];
      if (bound.is_null()) {
        EXPECT_FALSE(ours.has_value()) << key;
      } else {
        ASSERT_TRUE(ours.has_value()) << key;
        EXPECT_NEAR(std::log(*ours), bound.get<double>(), kBoundTolerance) << key;
      }
    }
  }
  ASSERT_EQ(fit.tests.size(), r["tests"].size());
  for (std::size_t t = 0; t < fit.tests.size(); ++t) {
    const json& test = r["tests"][t];
    EXPECT_EQ(fit.tests[t].df, test["df"].get<int>()) << test["name"];
    if (test["df"].get<int>() == 0) continue;
    EXPECT_NEAR(fit.tests[t].statistic, test["statistic"].get<double>(), 1e-6) << test["name"];
    EXPECT_NEAR(fit.tests[t].p_value, test["p_value"].get<double>(),
                1e-6 * test["p_value"].get<double>() + 1e-12)
        << test["name"];
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, AgainstR, ::testing::Range<std::size_t>(0, 5));

bool mentions(const PoissonFit& fit, const std::string& text) {
  for (const std::string& note : fit.notes) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PoissonRegression, SaysWhatTheDataCannotSeparateOrBound) {
  std::ifstream in(std::string(BATON_TEST_DATA) + "/analysis/poisson_glm.json");
  const json all = json::parse(in);
  const PoissonFit collinear = fit_poisson(design_of(all[3]));
  EXPECT_TRUE(mentions(collinear, "'prefill' cannot be separated from 'dual' in this exposure"))
      << collinear.notes.front();
  const PoissonFit no_events = fit_poisson(design_of(all[4]));
  EXPECT_TRUE(mentions(no_events, "no events with 'prefill'"));
  EXPECT_EQ(no_events.coefficients[2].ratio, 0.0);
  EXPECT_FALSE(no_events.coefficients[2].low.has_value());
}

PoissonDesign busy_design(std::int64_t reference_events, std::int64_t other_events = 2) {
  return PoissonDesign{
      .columns = {"busy=2", "busy=3+"},
      .terms = {PoissonTerm{.name = "busy", .columns = {0, 1}, .reference = "busy=1"}},
      .cells = {PoissonCell{.covariates = {0, 0}, .events = reference_events, .hours = 2.0},
                PoissonCell{.covariates = {1, 0}, .events = other_events, .hours = 1.0},
                PoissonCell{.covariates = {0, 1}, .events = other_events, .hours = 1.0}}};
}

// No event at all: no ratio to estimate (before: e^-20-ish numbers with [0, inf]); the
// reference rate is 0 with the profile bound of a Poisson count of 0 in its 2 hours:
// the deviance 2 mu reaches the chi-square(1) 95% quantile at mu = 3.841459 / 2.
TEST(PoissonRegression, NoEventsAtAllGiveNoRatioAndAZeroReferenceRate) {
  const PoissonFit fit = fit_poisson(busy_design(0, 0));
  for (std::size_t k = 1; k <= 2; ++k) {
    const PoissonCoefficient& c = fit.coefficients[k];
    EXPECT_EQ(c.no_estimate, "no hangs at all: no rates to compare") << c.name;
    EXPECT_FALSE(c.ratio || c.estimate || c.low || c.high || c.wald_p) << c.name;
  }
  EXPECT_EQ(fit.coefficients[0].ratio, 0.0);
  ASSERT_TRUE(fit.coefficients[0].high.has_value());
  EXPECT_NEAR(*fit.coefficients[0].high, 3.841458820694124 / 2.0 / 2.0, 1e-6);
}

// The reference level alone without events: no single column is without events on one
// side, yet both ratios are unbounded (before: e^22 with Wald p = 1). Each one's lower
// bound in closed form: with busy=3+ fitted exactly, the profile deviance of busy=2's log
// ratio b over the reference (0 events in 2 h) and busy=2 (2 in 1 h) is
// 4 log(1 + 2 e^-b), which reaches 3.841459 at e^b = 2 / (e^(3.841459 / 4) - 1).
TEST(PoissonRegression, AReferenceLevelWithoutEventsLeavesTheRatiosUnbounded) {
  const PoissonFit f = fit_poisson(busy_design(0));
  EXPECT_EQ(f.coefficients[0].ratio, 0.0);
  const double low = 2.0 / (std::exp(3.841458820694124 / 4.0) - 1.0);
  for (std::size_t k = 1; k <= 2; ++k) {
    const PoissonCoefficient& c = f.coefficients[k];
    EXPECT_TRUE(c.no_estimate.empty()) << c.name;
    EXPECT_FALSE(c.ratio || c.estimate || c.wald_p || c.high) << c.name;
    ASSERT_TRUE(c.low.has_value()) << c.name;
    EXPECT_NEAR(*c.low, low, 1e-6 * low) << c.name;
  }
  // With one event at the reference every ratio is finite again, Wald p and all.
  const PoissonFit finite = fit_poisson(busy_design(1));
  for (const PoissonCoefficient& c : finite.coefficients) {
    EXPECT_TRUE(c.ratio && c.low && c.high) << c.name;
  }
  EXPECT_NEAR(*finite.coefficients[1].ratio, 4.0, 1e-6);  // 2/h against 1 in 2 h
}

// Simulated exposure over three factors, hangs at 0.5 an hour where `cause` is on and
// 0.05 elsewhere: the regression names that factor and no other (fixed seed; 400 hours
// per cell, so the true ratio 10 is far from 1 and the others' p-values are uniform).
PoissonFit simulated(std::size_t cause, std::uint64_t seed) {
  PoissonDesign design;
  design.columns = {"dual", "prefill_in_flight", "long_context"};
  for (std::size_t c = 0; c < 3; ++c) design.terms.push_back({design.columns[c], {c}});
  std::mt19937_64 random(seed);
  for (int cell = 0; cell < 8; ++cell) {
    std::vector<double> x = {double(cell & 1), double((cell >> 1) & 1), double((cell >> 2) & 1)};
    const double hours = 400.0;
    const double rate = x[cause] == 1.0 ? 0.5 : 0.05;
    design.cells.push_back(
        {x, std::poisson_distribution<std::int64_t>(rate * hours)(random), hours});
  }
  return fit_poisson(design);
}

TEST(PoissonRegression, AttributesSimulatedHangsToTheFactorTheyDependOn) {
  for (std::size_t cause = 0; cause < 3; ++cause) {
    const PoissonFit fit = simulated(cause, 7 + cause);
    for (std::size_t t = 0; t < 3; ++t) {
      SCOPED_TRACE(fit.tests[t].name);
      if (t == cause) {
        EXPECT_LT(fit.tests[t].p_value, 1e-12);
        EXPECT_GT(*fit.coefficients[t + 1].low, 5.0);  // true ratio 10
        EXPECT_LT(*fit.coefficients[t + 1].high, 20.0);
      } else {
        EXPECT_GT(fit.tests[t].p_value, 0.01);
        EXPECT_LT(*fit.coefficients[t + 1].low, 1.0);
        EXPECT_GT(*fit.coefficients[t + 1].high, 1.0);
      }
    }
  }
}

TEST(PoissonRegression, RefusesCellsThatDoNotFit) {
  PoissonDesign design;
  design.columns = {"dual"};
  design.cells = {{{0.0, 1.0}, 1, 1.0}};
  EXPECT_THROW(fit_poisson(design), std::invalid_argument);
  design.cells = {{{1.0}, 2, 0.0}};
  EXPECT_THROW(fit_poisson(design), std::invalid_argument);
  design.cells = {{{1.0}, -1, 1.0}};
  EXPECT_THROW(fit_poisson(design), std::invalid_argument);
}

}  // namespace
}  // namespace baton
