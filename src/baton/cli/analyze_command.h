// The `baton analyze` verb: exposure, hang rates and exact tests of a ledger or of CSV logs
// from another server, an A/B comparison, and a timeline plot.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "baton/analysis/hang_analysis.h"

namespace baton {

struct AnalyzeCommand {
  std::vector<std::string> ledgers;
  std::vector<std::string> policies;
  std::string intervals_csv;
  std::string events_csv;
  std::string cluster_window = "45m";
  std::vector<std::string> classes;
  bool compare = false;
  bool experiment = false;  // --experiment: the ledger's live experiments (analyze_experiment.h)
  std::string plot_path;
  std::string plot_gaps = "collapse";  // --plot-gaps: cut long idle gaps from the axis, or keep
  bool json = false;
  std::vector<std::string> by;  // --by: factors of a stratified analysis (analysis/strata.h)
  std::string since, until;     // --since/--until: the window analysed (analysis/time_window.h)
  std::string prometheus;       // --prometheus URL: a fleet's counters instead of ledgers
  std::string range;     // --range: the window ending now, in Prometheus's units; empty: 7d
  std::string selector;  // --selector '{job="baton"}': which series
  std::string timeout;   // --timeout: of each Prometheus request; empty: 30s
  AnalysisOptions options;

  CLI::App* attach(CLI::App& app);
  // Throws std::invalid_argument for a usage error; returns the exit code.
  int run();

 private:
  int run_stratified();
};

}  // namespace baton
