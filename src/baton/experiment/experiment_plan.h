// ExperimentPlan: what `baton serve --experiment FILE` runs (issue 51): two arms, each a full
// GPU turn setting, switched in blocks of a fixed length in the block schedule's order, and the
// sequential test's design (alpha, the reduction to detect, the cluster window, the planned
// hours). Read from a TOML file:
//
//   name = "serialize-vs-concurrent"   # optional: the file's stem
//   block_minutes = 60                 # or block_seconds (short test runs); default 60 minutes
//   planned_hours = 200                # exposure hours over both arms; 0 or absent: no limit
//   reduction = 5                      # the rate cut to detect (> 1)
//   alpha = 0.05
//   cluster_window = "45m"
//   seed = 1                           # the block order's
//   end_on = "concurrent"              # kept when the plan runs out without a winner
//   [[arm]]
//   name = "concurrent"
//   policy = "concurrent"
//   [[arm]]
//   name = "serialize"
//   policy = "serialize"               # also quantum, max_hold_ms, decode_first, prefill_share
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/turn/turn_options.h"

namespace baton {

struct ExperimentArm {
  std::string name;
  TurnOptions turn;
};

struct ExperimentPlan {
  std::string name;                 // from the file, else the file's stem
  std::vector<ExperimentArm> arms;  // exactly two (the verdict compares two)
  double block_s = 3600.0;          // each block's length
  double planned_hours = 0.0;       // exposure hours over both arms; 0: no limit
  double reduction = 5.0;           // the rate cut to detect (> 1), as SequentialDesign
  double alpha = 0.05;
  double cluster_window_s = 2700.0;
  std::uint64_t seed = 1;   // the block order's
  std::size_t end_arm = 0;  // kept when the plan runs out without a winner
};

// Reads the TOML file; each arm's turn starts from `base` (the server's configured turn:
// scope, spin, ...) with the arm's keys applied. Throws std::invalid_argument naming the file
// and the key (e.g. "experiment.toml: arm[1].policy: 'serial' is not a policy (concurrent,
// serialize, partition)"), also when the file cannot be read.
ExperimentPlan read_experiment_plan(const std::filesystem::path& file, const TurnOptions& base);
// The same from text; `file` names it in errors and gives the default name (its stem).
ExperimentPlan parse_experiment_plan(std::string_view toml_text, std::string_view file,
                                     const TurnOptions& base);

// Throws std::invalid_argument naming the field when a plan built in code is out of range
// (the parser's checks, for plans that did not come from a file).
void validate(const ExperimentPlan& plan);

// What the ledger stores and /v1/experiment shows: the design, and each arm's name, its turn
// (describe(TurnOptions)) and its settings.
nlohmann::json to_json(const ExperimentPlan& plan);

}  // namespace baton
