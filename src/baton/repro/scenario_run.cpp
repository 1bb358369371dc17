#include "baton/repro/scenario_run.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "baton/common/clock.h"
#include "baton/ledger/ledger_reader.h"
#include "baton/repro/child_process.h"
#include "baton/repro/repro_report.h"

namespace fs = std::filesystem;

namespace baton {
namespace {

ReproResult run_in_processes(const ReproOptions&, const std::string&) {
  throw std::runtime_error("cross-process: not yet");
}

}  // namespace

ScenarioResult run_scenario(const Scenario& scenario, const std::string& baton_program) {
  ScenarioResult out;
  out.name = scenario.name;
  out.question = scenario.question;
  for (const ScenarioVariant& variant : scenario.variants) {
    ReproOptions options = variant.options;
    options.ledger_policy = scenario.name + ":" + variant.key;
    out.ledger_path = options.ledger_path;
    ReproResult result =
        variant.processes > 1 ? run_in_processes(options, baton_program) : run_repro(options);
    const bool fatal = result.faults.fatal;
    out.variants.push_back({variant.key, variant.label, variant.processes, std::move(result)});
    if (fatal) break;  // the device is gone: the other variants would measure nothing
  }
  if (scenario.analyze_hangs && !out.ledger_path.empty() && !out.variants.empty()) {
    AnalysisOptions analysis;
    // The study's 45 minutes, scaled to a run of minutes.
    analysis.cluster_window_s = std::max(1.0, scenario.variants.front().options.duration_s / 20.0);
    out.cluster_window_s = analysis.cluster_window_s;
    const LedgerContents ledger =
        read_ledger(out.ledger_path, scenario.name + ":" + scenario.variants.front().key);
    out.analysis = analyze_hangs(ledger.input, analysis);
  }
  return out;
}

}  // namespace baton
