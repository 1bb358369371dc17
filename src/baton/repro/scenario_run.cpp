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
#include "baton/repro/start_gate.h"
#include "baton/turn/host_overlap.h"
#include "baton/turn/host_segment.h"

namespace fs = std::filesystem;

namespace baton {
namespace {

std::vector<std::string> child_args(const ReproOptions& o, const ReproEngine& engine,
                                    std::uint64_t seed, const fs::path& gate) {
  std::vector<std::string> args = {
      "repro",
      "--backend",
      o.backend,
      "--engine",
      engine.spec,
      "--policy",
      std::string(to_string(o.turn.policy)),
      "--quantum",
      std::string(to_string(o.turn.quantum)),
      "--turn-scope",
      "host",
      "--turn-name",
      o.turn.host_name,
      "--duration",
      fmt::format("{}", o.duration_s),
      "--seed",
      std::to_string(seed),
      "--watchdog-deadline",
      fmt::format("{}", std::chrono::duration<double>(o.watchdog.deadline).count()),
      "--weights",
      std::string(to_string(o.weights)),
      "--json"};
  args.push_back(o.turn.decode_first ? "--decode-first" : "--decode-first=false");
  args.insert(args.end(), {"--max-hold-ms", fmt::format("{}", o.turn.max_hold_ms)});
  if (!o.ledger_path.empty()) {
    args.insert(args.end(), {"--ledger", o.ledger_path, "--ledger-policy", o.ledger_policy});
  }
  if (!o.gpu_sampling) args.push_back("--no-gpu-sampling");
  args.insert(args.end(), {"--start-gate", gate.string()});
  return args;
}

// The children's results as one run: their engines, and the overlap of the host-wide
// meter across both, read from the shared segment before and after.
ReproResult merge(const std::vector<ReproResult>& parts, const OverlapReading& before,
                  const OverlapReading& after) {
  ReproResult run = parts.front();
  run.engines.clear();
  run.turn_stats = {};
  run.faults = {};
  for (const ReproResult& part : parts) {
    run.duration_s = std::max(run.duration_s, part.duration_s);
    run.engines.insert(run.engines.end(), part.engines.begin(), part.engines.end());
    run.turn_stats.clients.insert(run.turn_stats.clients.end(), part.turn_stats.clients.begin(),
                                  part.turn_stats.clients.end());
    run.turn_stats.handovers += part.turn_stats.handovers;
    run.turn_stats.handover_us.p50 =
        std::max(run.turn_stats.handover_us.p50, part.turn_stats.handover_us.p50);
    run.turn_stats.handover_us.p99 =
        std::max(run.turn_stats.handover_us.p99, part.turn_stats.handover_us.p99);
    for (const auto& [kind, counts] : part.faults.by_kind) {
      run.faults.by_kind[kind].injected += counts.injected;
      run.faults.by_kind[kind].detected += counts.detected;
    }
    run.faults.recovered += part.faults.recovered;
    if (part.faults.fatal) {
      run.faults.fatal = true;
      run.faults.fatal_detail = part.faults.fatal_detail;
    }
  }
  run.overlap_s = after.overlap_s - before.overlap_s;
  run.overlap_episodes = after.episodes - before.episodes;
  return run;
}

// The children's outputs, removed however the run ends.
struct OutputDir {
  explicit OutputDir(fs::path where) : path(std::move(where)) { fs::create_directories(path); }
  ~OutputDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  const fs::path path;
};

// One `baton repro` child per engine, all on the host-wide turn and overlap meter.
ReproResult run_in_processes(const ReproOptions& options, const std::string& program) {
  if (options.faults.any()) {
    throw std::invalid_argument(
        "the cross-process variants take no fault injection (a hang rate counts one "
        "process's overlap only)");
  }
  HostOverlapMeter meter(std::make_shared<HostSegment>(options.turn.host_name));
  const OverlapReading before = meter.read(Clock::now());
  const OutputDir dir(fs::temp_directory_path() / fmt::format("baton-scenario-{}", ::getpid()));
  const fs::path gate = dir.path / "gate";
  fs::create_directories(gate);
  std::vector<std::unique_ptr<ChildProcess>> children;
  std::vector<fs::path> outputs;
  for (std::size_t i = 0; i < options.engines.size(); ++i) {
    outputs.push_back(dir.path / fmt::format("child-{}.json", i));
    children.push_back(std::make_unique<ChildProcess>(
        program, child_args(options, options.engines[i], options.seed + i, gate), outputs.back()));
  }
  const auto any_exited = [&children] {
    for (const auto& child : children) {
      if (child->wait_for(std::chrono::milliseconds(0))) return true;
    }
    return false;
  };
  // A child that exits before it is ready is reported below with its exit code.
  if (!open_start_gate(gate, children.size(), any_exited, kStartUpLimit) && !any_exited()) {
    throw std::runtime_error(fmt::format("the `baton repro` children were not ready within {} s",
                                         kStartUpLimit.count() / 1000));
  }
  // The engines' stop comes on top of the run's duration.
  const auto limit =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.duration_s * 1000.0) + 300'000);
  std::vector<ReproResult> parts;
  for (std::size_t i = 0; i < children.size(); ++i) {
    const std::optional<int> code = children[i]->wait_for(limit);
    if (!code)
      throw std::runtime_error(fmt::format("child {} ran past {} s", i, limit.count() / 1000));
    std::ifstream in(outputs[i]);
    nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || (*code != 0 && !json.contains("faults"))) {
      throw std::runtime_error(
          fmt::format("the `baton repro` child for engine {} exited with {} (its errors are above)",
                      options.engines[i].spec, *code));
    }
    ReproResult part = result_from_json(json);
    // Names as the one-process variants have them: the children each count from 1.
    for (EngineResult& e : part.engines) e.name = options.engines[i].name;
    for (ClientTurnStats& c : part.turn_stats.clients) c.name = options.engines[i].name;
    parts.push_back(std::move(part));
  }
  return merge(parts, before, meter.read(Clock::now()));
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
