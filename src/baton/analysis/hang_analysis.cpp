#include "baton/analysis/hang_analysis.h"

#include <algorithm>

namespace baton {

Analysis analyze_hangs(const ExposureInput& input, const AnalysisOptions& options) {
  // Only the hangs are filtered: the intervals, which may be millions, are not copied.
  std::vector<HangRecord> counted;
  std::copy_if(input.hangs.begin(), input.hangs.end(), std::back_inserter(counted),
               [&](const HangRecord& h) { return options.hang_classes.contains(h.error_class); });

  Analysis a;
  a.exposure = measure_exposure(input.intervals, std::move(counted), options.long_context);
  const Exposure& e = a.exposure;
  if (e.busy_hours > 0.0) a.dual_share = std::min(1.0, e.dual_hours / e.busy_hours);

  std::int64_t single = 0;
  for (const HangPlacement& h : e.hangs) {
    ++a.hangs.total;
    if (h.hang.engine.empty()) ++a.hangs.unattributed;
    if (h.busy_engines == 0) ++a.hangs.outside_busy;
    if (h.busy_engines >= 2) ++a.hangs.in_dual;
    if (h.busy_engines == 1) ++single;
  }
  a.busy_rate = poisson_rate(a.hangs.total - a.hangs.outside_busy, e.busy_hours);
  a.dual_rate = poisson_rate(a.hangs.in_dual, e.dual_hours);
  a.single_rate = poisson_rate(single, std::max(0.0, e.busy_hours - e.dual_hours));

  if (input.stream_intervals) a.stream = measure_stream_exposure(*input.stream_intervals);
  a.gpu_clients = measure_gpu_clients(input, options.other_client_sm_percent);

  const double share = a.dual_share.value_or(0.0);
  a.uniform = uniform_test(e.hangs, share);
  a.dependence = dependence_test(e.hangs, share, options.cluster_window_s);
  return a;
}

}  // namespace baton
