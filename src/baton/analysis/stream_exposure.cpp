#include "baton/analysis/stream_exposure.h"

#include <algorithm>
#include <map>
#include <string>

#include "baton/analysis/spans.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

// Each stream's stretches, sorted and joined where they overlap.
std::map<std::string, Spans> spans_by_stream(const std::vector<StreamInterval>& intervals) {
  std::map<std::string, Spans> streams;
  for (const StreamInterval& i : intervals) {
    if (i.end > i.start) streams[i.stream].emplace_back(i.start, i.end);
  }
  for (auto& [name, spans] : streams) {
    std::sort(spans.begin(), spans.end());
    spans = join_spans(spans, 0.0);
  }
  return streams;
}

}  // namespace

StreamExposure measure_stream_exposure(const std::vector<StreamInterval>& intervals) {
  std::vector<std::pair<double, int>> steps;  // (time, +1 busy / -1 idle)
  for (const auto& [name, spans] : spans_by_stream(intervals)) {
    for (const auto& [start, end] : spans) {
      steps.emplace_back(start, +1);
      steps.emplace_back(end, -1);
    }
  }
  // At one instant, ends sort before starts: [a, b) and [b, c) are never busy together.
  std::sort(steps.begin(), steps.end());
  StreamExposure exposure;
  int busy = 0;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    busy += steps[i].second;
    const double hours = (steps[i + 1].first - steps[i].first) / kSecondsPerHour;
    if (busy >= 1) exposure.busy_hours += hours;
    if (busy >= 2) exposure.dual_hours += hours;
  }
  if (exposure.busy_hours > 0.0) {
    exposure.dual_share = std::min(1.0, exposure.dual_hours / exposure.busy_hours);
  }
  return exposure;
}

}  // namespace baton
