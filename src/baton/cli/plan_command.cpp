#include "baton/cli/plan_command.h"

#include <iostream>

#include "baton/cli/finite_range.h"
#include "baton/common/exit_codes.h"

namespace baton {

CLI::App* PlanCommand::attach(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("plan", "Hours of hang-free running that an A/B test of a fix needs");
  cmd->add_option("--baseline-events", request.baseline.events, "Hangs seen in the baseline")
      ->required()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  cmd->add_option("--baseline-hours", request.baseline.hours, "Hours of baseline exposure")
      ->required()
      ->check(finite_range(1e-9, 1e12));
  cmd->add_option("--alpha", alphas, "Significance level (repeat for more; default 0.05)")
      ->check(finite_range(1e-12, 0.5));
  cmd->add_option("--reduction", request.reduction,
                  "Also: hours to show the fix cuts the rate at least this many times")
      ->check(finite_range(1.0, 1e9));
  cmd->add_option("--hours-run", request.hours_run,
                  "Hang-free hours of the fix so far: the p-value they reach")
      ->check(finite_range(0.0, 1e12));
  cmd->add_flag("--json", json, "Print one JSON object instead of a table");
  return cmd;
}

int PlanCommand::run() {
  if (!alphas.empty()) request.alphas = alphas;
  if (json) {
    std::cout << plan_json(request).dump(2) << "\n";
  } else {
    print_plan(std::cout, request);
  }
  return kExitOk;
}

}  // namespace baton
