// The `baton repro` verb: command-line options, and running them.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baton/repro/repro_options.h"
#include "baton/repro/scenarios.h"

namespace baton {

struct ReproCommand {
  ReproOptions options;
  std::string policy = "concurrent";
  std::string quantum = "op";
  std::string turn_scope = "process";
  std::string prefill_share = "weights";  // weights|auto|FLOAT
  std::string weights = "bf16";  // --weights
  std::vector<std::string> engine_specs;
  std::optional<std::uint64_t> fault_seed;
  double watchdog_deadline_s = 0.0;              // from options.watchdog when not given
  std::optional<double> slowdown_min_excess_ms;  // the backend's default when not given
  std::string scenario;                          // --scenario NAME; empty: the engines of --engine
  bool no_gpu_sampling = false;                  // --no-gpu-sampling
  ScenarioInputs scenario_inputs;

  // Declares the verb's options on `app` and returns the subcommand.
  CLI::App* attach(CLI::App& app);
  // Checks what CLI11 cannot (throws std::invalid_argument), then runs; returns the exit code.
  int run();

 private:
  void attach_fault_options(CLI::App& cmd);
  int run_named_scenario();
};

}  // namespace baton
