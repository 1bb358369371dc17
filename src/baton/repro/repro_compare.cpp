#include "baton/repro/repro_compare.h"

namespace baton {
namespace {

const EngineResult* find_engine(const std::vector<ReproResult>& runs, const std::string& name) {
  for (const ReproResult& run : runs) {
    for (const EngineResult& engine : run.engines) {
      if (engine.name == name) return &engine;
    }
  }
  return nullptr;
}

}  // namespace

ReproComparison run_comparison(const ReproOptions& options) {
  ReproComparison comparison;
  for (const ReproEngine& engine : options.engines) {
    ReproOptions solo = options;
    solo.engines = {engine};
    solo.turn.policy = TurnPolicy::concurrent;
    solo.ledger_policy = "solo";  // kept apart from the concurrent runs' exposure
    comparison.solo.push_back(run_repro(solo));
  }
  const std::pair<TurnPolicy, Quantum> policies[] = {{TurnPolicy::concurrent, Quantum::burst},
                                                     {TurnPolicy::serialize, Quantum::burst},
                                                     {TurnPolicy::serialize, Quantum::layer},
                                                     {TurnPolicy::serialize, Quantum::op}};
  for (auto [policy, quantum] : policies) {
    ReproOptions together = options;
    together.turn.policy = policy;
    together.turn.quantum = quantum;
    comparison.runs.push_back(run_repro(together));
  }
  // Only a GPU has SMs to split; on the CPU a partition would run as concurrent does.
  if (options.backend == "cuda") {
    ReproOptions partitioned = options;
    partitioned.turn.policy = TurnPolicy::partition;
    comparison.runs.push_back(run_repro(partitioned));
    if (!partitioned.turn.prefill_share_auto) {  // and the share picked from measured steps
      partitioned.turn.prefill_share_auto = true;
      comparison.runs.push_back(run_repro(partitioned));
    }
  }
  return comparison;
}

double aggregate_throughput(const ReproResult& run, const std::vector<ReproResult>& solo) {
  double sum = 0.0;
  for (const EngineResult& engine : run.engines) {
    const EngineResult* alone = find_engine(solo, engine.name);
    if (alone != nullptr && alone->steps_per_s > 0) sum += engine.steps_per_s / alone->steps_per_s;
  }
  return sum;
}

double solo_p50_ms(const std::vector<ReproResult>& solo, const std::string& name) {
  const EngineResult* alone = find_engine(solo, name);
  return alone != nullptr ? alone->step_ms.p50 : 0.0;
}

}  // namespace baton
