#include "baton/analysis/timeline_lanes.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace baton::timeline {

Lanes collect_lanes(const ExposureInput& input, const TimelineOptions& options) {
  Lanes lanes;
  for (const BusyInterval& iv : input.intervals) {
    if (!std::isfinite(iv.start) || !std::isfinite(iv.end)) continue;
    const bool is_long =
        options.long_context && iv.context_tokens && *iv.context_tokens >= *options.long_context;
    EngineRows& rows = lanes[iv.engine];
    (is_long ? rows.long_context : rows.normal).emplace_back(iv.start, std::max(iv.start, iv.end));
  }
  for (const HangRecord& hang : input.hangs) {
    if (!hang.engine.empty()) lanes[hang.engine];  // a lane for its marker
  }
  for (auto& [name, rows] : lanes) {
    std::sort(rows.normal.begin(), rows.normal.end());
    std::sort(rows.long_context.begin(), rows.long_context.end());
  }
  return lanes;
}

// Where at least two engines are busy: a sweep over the boundaries of each engine's union
// of intervals (an engine overlapping itself is not dual).
Spans dual_time(const Lanes& lanes) {
  std::vector<std::pair<double, int>> events;
  for (const auto& [name, rows] : lanes) {
    Spans all = rows.normal;
    all.insert(all.end(), rows.long_context.begin(), rows.long_context.end());
    std::sort(all.begin(), all.end());
    for (const auto& [start, end] : join_spans(all, 0.0)) {
      if (end <= start) continue;
      events.emplace_back(start, +1);
      events.emplace_back(end, -1);
    }
  }
  std::sort(events.begin(), events.end());  // at one instant, ends (-1) come before starts
  Spans dual;
  int busy = 0;
  double since = 0;
  for (const auto& [time, delta] : events) {
    const int before = busy;
    busy += delta;
    if (before < 2 && busy >= 2) since = time;
    if (before >= 2 && busy < 2 && time > since) dual.emplace_back(since, time);
  }
  return dual;
}

double total(const Spans& spans) {
  double sum = 0;
  for (const auto& [start, end] : spans) sum += end - start;
  return sum;
}

// When anything happened: every engine's intervals and every fault (an instant), joined.
Spans busy_spans(const Lanes& lanes, const std::vector<HangRecord>& hangs) {
  Spans busy;
  for (const auto& [name, rows] : lanes) {
    busy.insert(busy.end(), rows.normal.begin(), rows.normal.end());
    busy.insert(busy.end(), rows.long_context.begin(), rows.long_context.end());
  }
  for (const HangRecord& hang : hangs) {
    if (std::isfinite(hang.time)) busy.emplace_back(hang.time, hang.time);
  }
  std::sort(busy.begin(), busy.end());
  return join_spans(busy, 0.0);
}

// The earliest and latest instant of the input; none when it has nothing to draw.
std::optional<Range> data_range(const ExposureInput& input) {
  double t0 = INFINITY;
  double t1 = -INFINITY;
  auto add = [&](double t) {
    if (!std::isfinite(t)) return;
    t0 = std::min(t0, t);
    t1 = std::max(t1, t);
  };
  for (const BusyInterval& iv : input.intervals) {
    if (!std::isfinite(iv.start) || !std::isfinite(iv.end)) continue;
    add(iv.start);
    add(iv.end);
  }
  for (const HangRecord& hang : input.hangs) add(hang.time);
  if (t0 > t1) return std::nullopt;
  return Range{.t0 = t0, .t1 = t1};
}

}  // namespace baton::timeline
