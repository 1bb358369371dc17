// run_scenario: runs every variant of a named scenario (scenarios.h) into one ledger, the
// in-process ones through run_repro and the cross-process ones as one `baton repro` child
// per engine sharing a host-wide turn and overlap meter; then, for seed-replay, the
// analysis of the hangs the ledger recorded.
// Thread-safety: self-contained; call from one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baton/analysis/hang_analysis.h"
#include "baton/repro/repro_run.h"
#include "baton/repro/scenarios.h"

namespace baton {

struct VariantResult {
  std::string key;
  std::string label;
  int processes = 1;
  ReproResult result;
};

struct ScenarioResult {
  std::string name;
  std::string question;
  std::string ledger_path;
  std::vector<VariantResult> variants;
  std::optional<Analysis> analysis;  // seed-replay only
  double cluster_window_s = 0.0;     // the dependence test's window
};

// `baton_program` is the binary the cross-process variants launch (self_executable()).
// Throws std::runtime_error when a child process fails or runs far past its duration.
ScenarioResult run_scenario(const Scenario& scenario, const std::string& baton_program);

}  // namespace baton
