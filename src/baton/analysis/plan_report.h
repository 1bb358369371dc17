// How `baton plan` shows the A/B planner's answers: a table, or JSON with the keys
// hours_for_alpha, hours_for_reduction and so_far (docs/analysis.md).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "baton/analysis/ab_plan.h"

namespace baton {

struct PlanRequest {
  Baseline baseline;
  std::vector<double> alphas{0.05};
  std::optional<double> reduction;  // K: show at least a K-fold cut (at the first alpha)
  std::optional<double> hours_run;  // hang-free hours of the fix so far
};

nlohmann::json plan_json(const PlanRequest& request);
void print_plan(std::ostream& out, const PlanRequest& request);

}  // namespace baton
