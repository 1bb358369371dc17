#include "baton/analysis/plan_report.h"

#include <fmt/format.h>

#include "baton/common/json_or_null.h"

namespace baton {
namespace {

using nlohmann::json;

std::string hours_text(const std::optional<double>& h) {
  return h ? fmt::format("{:.1f} h", *h) : std::string("never");
}

}  // namespace

json plan_json(const PlanRequest& r) {
  json for_alpha = json::array();
  for (double alpha : r.alphas) {
    const HoursNeeded h = hours_needed(r.baseline, alpha);
    for_alpha.push_back({{"alpha", alpha},
                         {"conditional", json_or_null(h.conditional)},
                         {"known_rate", json_or_null(h.known_rate)}});
  }
  json out{{"baseline_events", r.baseline.events},
           {"baseline_hours", r.baseline.hours},
           {"hours_for_alpha", std::move(for_alpha)},
           {"hours_for_reduction", nullptr},
           {"so_far", nullptr}};
  if (r.reduction) {
    const HoursNeeded h = hours_needed(r.baseline, r.alphas.front(), *r.reduction);
    out["hours_for_reduction"] = {{"factor", *r.reduction},
                                  {"alpha", r.alphas.front()},
                                  {"conditional", json_or_null(h.conditional)},
                                  {"known_rate", json_or_null(h.known_rate)}};
  }
  if (r.hours_run) {
    const PValues p = p_values_so_far(r.baseline, *r.hours_run);
    out["so_far"] = {
        {"hours", *r.hours_run}, {"p_conditional", p.conditional}, {"p_known_rate", p.known_rate}};
  }
  return out;
}

void print_plan(std::ostream& out, const PlanRequest& r) {
  out << fmt::format("Baseline: {} hangs in {:g} h ({:.3g} per hour)\n", r.baseline.events,
                     r.baseline.hours, static_cast<double>(r.baseline.events) / r.baseline.hours);
  if (r.baseline.events == 0) {
    out << "No hang in the baseline: no amount of hang-free running can show that a fix helps.\n";
  }
  out << "Hang-free hours of the fix needed to reject \"the fix changes nothing\" (one-sided)\n";
  out << fmt::format("  {:>8}  {:>22}  {:>22}\n", "alpha", "exact conditional",
                     "baseline rate known");
  for (double alpha : r.alphas) {
    const HoursNeeded h = hours_needed(r.baseline, alpha);
    out << fmt::format("  {:>8g}  {:>22}  {:>22}\n", alpha, hours_text(h.conditional),
                       hours_text(h.known_rate));
  }
  if (r.reduction) {
    const HoursNeeded h = hours_needed(r.baseline, r.alphas.front(), *r.reduction);
    out << fmt::format(
        "To show at least a {:g}-fold cut at alpha {:g}: {} (conditional), {} (rate known)\n",
        *r.reduction, r.alphas.front(), hours_text(h.conditional), hours_text(h.known_rate));
  }
  if (r.hours_run) {
    const PValues p = p_values_so_far(r.baseline, *r.hours_run);
    out << fmt::format(
        "After {:g} h without a hang: p = {:.3g} (conditional), {:.3g} (rate known)\n",
        *r.hours_run, p.conditional, p.known_rate);
  }
}

}  // namespace baton
