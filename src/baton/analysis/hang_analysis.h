// The whole analysis of one set of busy intervals and hangs: exposure, rates, the
// uniform-placement test and its dependence-robust variants, the stream exposure, and
// other GPU clients' use during the busy time.
// `baton analyze` prints it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "baton/analysis/exposure.h"
#include "baton/analysis/gpu_clients.h"
#include "baton/analysis/rate_statistics.h"
#include "baton/analysis/stream_exposure.h"
#include "baton/analysis/uniform_placement.h"

namespace baton {

struct AnalysisOptions {
  std::int64_t long_context = 32768;
  double cluster_window_s = 45 * 60;
  // Event classes that count as hangs (the GPU stopped making progress).
  std::set<std::string> hang_classes{"hang", "timeout", "submissions_ignored"};
  // Other processes' summed SM use (percent) from which another GPU client counts as busy.
  double other_client_sm_percent = kDefaultOtherClientSmPercent;
};

struct HangCounts {
  std::int64_t total = 0;
  std::int64_t unattributed = 0;  // no engine blamed
  std::int64_t outside_busy = 0;  // at a moment no LLM engine was busy
  std::int64_t in_dual = 0;       // at a moment two or more were busy
};

// Every figure but `stream` is on the engine exposure (engines with requests in
// progress); `stream` is the GPU-side one, empty when the input did not record it.
struct Analysis {
  Exposure exposure;
  std::optional<StreamExposure> stream;
  std::optional<double> dual_share;  // dual / busy; empty without busy time
  HangCounts hangs;
  RateEstimate busy_rate;    // hangs per busy hour
  RateEstimate dual_rate;    // hangs in dual time per dual hour
  RateEstimate single_rate;  // hangs while exactly one engine was busy, per such hour
  UniformTest uniform;
  DependenceTest dependence;
  std::optional<GpuClients> gpu_clients;  // empty when the input holds no GPU poll
};

Analysis analyze_hangs(const ExposureInput& input, const AnalysisOptions& options);

}  // namespace baton
