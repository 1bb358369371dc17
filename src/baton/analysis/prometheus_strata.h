// Strata (strata.h) from a fleet's Prometheus: the raw samples of the counters every
// `baton serve` exports (baton_exposure_seconds_total, baton_exposure_faults_total, as
// the Prometheus HTTP API returns a range selector: resultType "matrix"), so that `baton
// analyze --prometheus` runs the analysis of merged ledgers over every host (`instance`).
// A counter's increase over the window is summed from its samples, a drop being a restart
// (the counter began again at 0), without PromQL's extrapolation to the window's edges:
// counts stay whole. A series' first sample in the window is its baseline, unless its
// process started inside the window (baton_process_start_time_seconds): the counter was 0
// then, so the first value counts too. (Every series exists from its process's start.)
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "baton/analysis/strata.h"

namespace baton {

// The increase of one series over its samples ([[time, "value"], ...]); `from_zero`: the
// first sample counts from 0 rather than being the baseline.
double counter_increase(const nlohmann::json& values, bool from_zero);

struct PrometheusSeries {
  nlohmann::json exposure;     // baton_exposure_seconds_total[range]: query data, a matrix
  nlohmann::json faults;       // baton_exposure_faults_total[range]
  nlohmann::json starts;       // baton_process_start_time_seconds[range]
  double window_start = 0.0;   // Unix seconds: the query's time minus the range
};

// std::invalid_argument (naming the problem) for data that is not a matrix of those
// counters' series, or a state label of unknown value.
Strata strata_from_prometheus(const PrometheusSeries& series,
                              const std::set<std::string>& hang_classes);

}  // namespace baton
