// run_comparison: the same engines solo and then together under every turn policy
// (concurrent, serialize per burst, per layer and per op; on CUDA partition at the given
// share and at --prefill-share auto), for a side-by-side table.
// Thread-safety: as run_repro.
#pragma once

#include <vector>

#include "baton/repro/repro_run.h"

namespace baton {

struct ReproComparison {
  std::vector<ReproResult> solo;  // one run per engine, alone on the device
  std::vector<ReproResult> runs;  // one run per policy, all engines together
};

ReproComparison run_comparison(const ReproOptions& options);

// Sum over engines of (rate together / rate solo): 1.0 means no throughput gained or lost.
double aggregate_throughput(const ReproResult& run, const std::vector<ReproResult>& solo);

// Step p50 of the engine named `name` in its solo run; 0 when unknown.
double solo_p50_ms(const std::vector<ReproResult>& solo, const std::string& name);

}  // namespace baton
