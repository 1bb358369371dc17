// The `baton plan` verb: how many hang-free hours an A/B run of a fix needs.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>

#include "baton/analysis/plan_report.h"

namespace baton {

struct PlanCommand {
  PlanRequest request;
  std::vector<double> alphas;
  bool json = false;

  CLI::App* attach(CLI::App& app);
  int run();
};

}  // namespace baton
