#include "baton/analysis/regression_report.h"

#include <fmt/format.h>

#include <optional>

#include "baton/analysis/counted.h"
#include "baton/analysis/rate_statistics.h"
#include "baton/common/json_or_null.h"

namespace baton {
namespace {

std::string text(const std::optional<double>& value, const char* missing) {
  return value ? fmt::format("{:.3g}", *value) : std::string(missing);
}

// The levels every rate ratio compares with: "busy=1, host=a.db".
std::string reference_levels(const PoissonDesign& design) {
  std::string levels;
  for (const PoissonTerm& term : design.terms) {
    if (term.reference.empty()) continue;
    levels += (levels.empty() ? "" : ", ") + term.reference;
  }
  return levels;
}

// The cell's levels in words: "busy=2, prefill_in_flight" (a reference level says nothing).
std::string cell_label(const PoissonDesign& design, const PoissonCell& cell) {
  std::string label;
  for (std::size_t j = 0; j < design.columns.size(); ++j) {
    if (cell.covariates[j] == 0.0) continue;
    label += (label.empty() ? "" : ", ") + design.columns[j];
  }
  return label.empty() ? "(reference: " + reference_levels(design) + ")" : label;
}

// The level of `term` that every cell with exposure is at, in words; nullopt when the
// cells are at two or more (there is something to compare).
std::optional<std::string> only_level(const PoissonDesign& design, const PoissonTerm& term) {
  std::optional<std::string> level;
  for (const PoissonCell& cell : design.cells) {
    if (!(cell.hours > 0.0)) continue;
    std::string name = term.reference;
    for (const std::size_t column : term.columns) {
      if (cell.covariates[column] != 0.0) name = design.columns[column];
    }
    if (level && *level != name) return std::nullopt;
    level = name;
  }
  return level;
}

// A coefficient's ratio, "unbounded" where the data bound it on one side only.
std::string ratio_text(const PoissonCoefficient& c) {
  if (c.ratio) return fmt::format("{:.3g}", *c.ratio);
  return "unbounded";
}

}  // namespace

Stratified stratified_analysis(Strata strata, std::vector<Factor> factors) {
  Stratified result{
      .factors = std::move(factors), .strata = std::move(strata), .design = {}, .fit = {}};
  result.design = design_for(result.strata, result.factors);
  result.fit = fit_poisson(result.design);
  double busy_hours = 0.0, dual_hours = 0.0;
  for (const Stratum& s : result.strata.strata) {
    busy_hours += s.hours;
    if (s.state.busy >= 2) dual_hours += s.hours;
    result.uniform.n += s.attributed_hangs;
    if (s.state.busy >= 2) result.uniform.in_dual += s.attributed_hangs;
  }
  result.dual_share = busy_hours > 0.0 ? dual_hours / busy_hours : 0.0;
  result.uniform.p =
      binomial_upper_tail(result.uniform.n, result.uniform.in_dual, result.dual_share);
  return result;
}

nlohmann::json to_json(const Stratified& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (const PoissonCell& cell : r.design.cells) {
    nlohmann::json levels = nlohmann::json::object();
    for (std::size_t j = 0; j < r.design.columns.size(); ++j) {
      levels[r.design.columns[j]] = cell.covariates[j];
    }
    cells.push_back({{"levels", levels}, {"hours", cell.hours}, {"hangs", cell.events}});
  }
  nlohmann::json coefficients = nlohmann::json::array();
  for (const PoissonCoefficient& c : r.fit.coefficients) {
    coefficients.push_back(
        {{"name", c.name},
         {"estimable", c.estimable},
         {"log_ratio", json_or_null(c.estimate)},
         {"std_error", json_or_null(c.std_error)},
         {"rate_ratio", json_or_null(c.ratio)},
         {"low", json_or_null(c.low)},
         {"high", json_or_null(c.high)},
         {"wald_p", json_or_null(c.wald_p)},
         {"no_estimate",
          c.no_estimate.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.no_estimate)}});
  }
  nlohmann::json tests = nlohmann::json::array();
  for (std::size_t i = 0; i < r.fit.tests.size(); ++i) {
    const PoissonTermTest& t = r.fit.tests[i];
    tests.push_back({{"factor", t.name},
                     {"reference", r.design.terms[i].reference},
                     {"df", t.df},
                     {"statistic", t.statistic},
                     {"p_value", t.df > 0 ? nlohmann::json(t.p_value) : nlohmann::json(nullptr)}});
  }
  return {{"reference", reference_levels(r.design)},
          {"cells", cells},
          {"hangs_while_idle", r.strata.hangs_while_idle},
          {"coefficients", coefficients},
          {"tests", tests},
          {"deviance", r.fit.deviance},
          {"df_residual", r.fit.df_residual},
          {"notes", r.fit.notes},
          {"uniform_test",
           {{"n", r.uniform.n},
            {"in_dual", r.uniform.in_dual},
            {"dual_share", r.dual_share},
            {"p", r.uniform.p}}}};
}

void print_stratified(std::ostream& out, const Stratified& r) {
  out << "Busy time by state (hangs at the state of their moment)\n";
  out << fmt::format("  {:<44} {:>10} {:>6}  {}\n", "state", "hours", "hangs", "per hour");
  for (const PoissonCell& cell : r.design.cells) {
    out << fmt::format("  {:<44} {:>10.4g} {:>6}  {:.3g}\n", cell_label(r.design, cell), cell.hours,
                       cell.events, static_cast<double>(cell.events) / cell.hours);
  }
  if (r.strata.hangs_while_idle > 0) {
    out << fmt::format("  {} while no LLM engine was busy (no exposure: left out)\n",
                       count_of(r.strata.hangs_while_idle, "hang"));
  }
  out << "\nPoisson regression, busy hours as exposure: rate ratios with 95% "
         "profile-likelihood intervals\n";
  out << "  each against the reference: " << reference_levels(r.design) << "\n";
  out << fmt::format("  {:<28} {:>10} {:>22} {:>10}\n", "", "ratio", "interval", "Wald p");
  for (const PoissonCoefficient& c : r.fit.coefficients) {
    if (!c.estimable) {
      out << fmt::format("  {:<28} {:>10}\n", c.name, "(aliased)");
      continue;
    }
    const bool intercept = c.name == "(intercept)";
    const std::string name = intercept ? "hangs/h at the reference" : c.name;
    if (!c.no_estimate.empty()) {
      out << fmt::format("  {:<28} no estimate: {}\n", name, c.no_estimate);
      continue;
    }
    out << fmt::format("  {:<28} {:>10} {:>22} {:>10}\n", name, ratio_text(c),
                       fmt::format("[{}, {}]", text(c.low, "0"), text(c.high, "unbounded")),
                       intercept ? "" : text(c.wald_p, "-"));
  }
  out << "\nLikelihood-ratio test of each factor (deviance dropped by leaving it out)\n";
  for (std::size_t i = 0; i < r.fit.tests.size(); ++i) {
    const PoissonTermTest& t = r.fit.tests[i];
    const std::optional<std::string> one = only_level(r.design, r.design.terms[i]);
    if (one) {
      out << fmt::format("  {:<28} one level only here ({}): nothing to compare\n", t.name, *one);
    } else if (t.df == 0) {
      out << fmt::format("  {:<28} not separable from the others in this exposure\n", t.name);
    } else {
      out << fmt::format("  {:<28} chi2 = {:.3g} on {} df, p = {:.3g}\n", t.name, t.statistic, t.df,
                         t.p_value);
    }
  }
  for (const std::string& note : r.fit.notes) out << "note: " << note << "\n";
  out << fmt::format(
      "\nUniform placement over all of it: {} of {} in dual time, dual share "
      "{:.1f}%, p = {:.3g} (exact binomial tail)\n",
      r.uniform.in_dual, count_of(r.uniform.n, "attributed hang"), 100.0 * r.dual_share,
      r.uniform.p);
}

}  // namespace baton
