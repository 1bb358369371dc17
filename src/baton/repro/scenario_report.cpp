#include "baton/repro/scenario_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "baton/analysis/analysis_report.h"
#include "baton/repro/repro_report.h"

namespace baton {
namespace {

double wait_s(const ReproResult& run, const std::string& engine) {
  for (const ClientTurnStats& c : run.turn_stats.clients) {
    if (c.name == engine) return c.wait_s;
  }
  return 0.0;
}

std::string decode_p99(const EngineResult& e) {
  return e.decode_step_ms.count > 0 ? fmt::format("{:.3f}", e.decode_step_ms.p99) : "-";
}

void print_variant(std::ostream& out, const VariantResult& v) {
  const ReproResult& run = v.result;
  bool first = true;
  for (const EngineResult& e : run.engines) {
    fmt::print(out, "{:<34} {:<12} {:>7} {:>9.3f} {:>9.3f} {:>9.3f} {:>10} {:>8.2f} {:>6} {:>7}\n",
               first ? v.label : "", e.name, e.steps, e.step_ms.p50, e.step_ms.p99, e.step_ms.max,
               decode_p99(e), wait_s(run, e.name), e.gpu_failures, e.retries);
    first = false;
  }
  const FaultReport& f = run.faults;
  const auto slowdowns = f.by_kind.find(FaultKind::slowdown);
  fmt::print(out,
             "{:<34} overlap {:.3f} s of {:.2f} s ({} episodes); faults detected {} of {} "
             "injected, {} recovered; slowdowns flagged {}\n",
             "", run.overlap_s, run.duration_s, run.overlap_episodes, f.detected(), f.injected(),
             f.recovered, slowdowns != f.by_kind.end() ? slowdowns->second.detected : 0);
  if (f.fatal) fmt::print(out, "{:<34} FATAL: {}\n", "", f.fatal_detail);
}

}  // namespace

nlohmann::json to_json(const ScenarioResult& result) {
  nlohmann::json variants = nlohmann::json::array();
  for (const VariantResult& v : result.variants) {
    nlohmann::json entry = to_json(v.result);
    entry["key"] = v.key;
    entry["label"] = v.label;
    entry["processes"] = v.processes;
    variants.push_back(std::move(entry));
  }
  nlohmann::json json = {{"scenario", result.name},
                         {"question", result.question},
                         {"ledger", result.ledger_path},
                         {"variants", std::move(variants)}};
  if (result.analysis) {
    json["analysis"] = to_json(*result.analysis);
    json["analysis"]["cluster_window_s"] = result.cluster_window_s;
  }
  return json;
}

void print_table(std::ostream& out, const ScenarioResult& result) {
  const double duration = result.variants.empty() ? 0.0 : result.variants.front().result.duration_s;
  const std::string backend = result.variants.empty() ? "" : result.variants.front().result.backend;
  fmt::print(out, "baton repro --scenario {}: backend {}, {:.1f} s per variant, ledger {}\n",
             result.name, backend, duration, result.ledger_path);
  fmt::print(out, "{}\n\n", result.question);
  fmt::print(out, "{:<34} {:<12} {:>7} {:>9} {:>9} {:>9} {:>10} {:>8} {:>6} {:>7}\n", "variant",
             "engine", "steps", "p50 ms", "p99 ms", "max ms", "decode p99", "wait s", "failed",
             "retried");
  for (const VariantResult& v : result.variants) print_variant(out, v);
  if (result.analysis) {
    fmt::print(out, "\nThe hangs of the ledger's seed-replay run (cluster window {:.0f} s):\n",
               result.cluster_window_s);
    print_analysis(out, *result.analysis);
  }
}

}  // namespace baton
