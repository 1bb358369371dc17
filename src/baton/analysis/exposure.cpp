#include "baton/analysis/exposure.h"

#include <algorithm>
#include <map>

#include "baton/analysis/spans.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

// Sorts and joins overlapping spans in place (touching ones stay apart: the sweep adds
// no segment between them, so the sums are the same).
void merge(Spans& spans) {
  std::sort(spans.begin(), spans.end());
  spans = join_spans(spans, 0.0);
}

bool covers(const Spans& spans, double t) {
  auto it = std::upper_bound(spans.begin(), spans.end(), t,
                             [](double value, const auto& span) { return value < span.first; });
  return it != spans.begin() && t < std::prev(it)->second;
}

struct EngineSpans {
  Spans busy;
  Spans long_busy;  // with a request of at least the threshold
};

std::map<std::string, EngineSpans> spans_by_engine(const std::vector<BusyInterval>& intervals,
                                                   std::int64_t threshold) {
  std::map<std::string, EngineSpans> engines;
  for (const BusyInterval& interval : intervals) {
    if (interval.kind == "embed" || !(interval.end > interval.start)) continue;
    EngineSpans& spans = engines[interval.engine];
    spans.busy.emplace_back(interval.start, interval.end);
    if (interval.context_tokens && *interval.context_tokens >= threshold) {
      spans.long_busy.emplace_back(interval.start, interval.end);
    }
  }
  for (auto& [name, spans] : engines) {
    merge(spans.busy);
    merge(spans.long_busy);
  }
  return engines;
}

// A step of the sweep: at `time`, `busy` and `long_busy` change by the deltas, and the
// engine (index) that changed, for the time an engine is busy alone.
struct Step {
  double time;
  int busy_delta;
  int long_delta;
  std::size_t engine;
};

// One stretch of constant state between two consecutive steps.
struct Segment {
  double start, end;
  int busy, long_busy;
  std::size_t sole_engine;  // meaningful when busy == 1
};

std::vector<Segment> sweep(const std::vector<const EngineSpans*>& engines) {
  std::vector<Step> steps;
  for (std::size_t e = 0; e < engines.size(); ++e) {
    for (const auto& [start, end] : engines[e]->busy) {
      steps.push_back({start, +1, 0, e});
      steps.push_back({end, -1, 0, e});
    }
    for (const auto& [start, end] : engines[e]->long_busy) {
      steps.push_back({start, 0, +1, e});
      steps.push_back({end, 0, -1, e});
    }
  }
  std::sort(steps.begin(), steps.end(),
            [](const Step& a, const Step& b) { return a.time < b.time; });
  std::vector<Segment> segments;
  int busy = 0;
  int long_busy = 0;
  std::size_t index_sum = 0;  // sum of busy engines' indices: the sole one when busy == 1
  for (std::size_t i = 0; i < steps.size(); ++i) {
    busy += steps[i].busy_delta;
    long_busy += steps[i].long_delta;
    if (steps[i].busy_delta > 0) index_sum += steps[i].engine;
    if (steps[i].busy_delta < 0) index_sum -= steps[i].engine;
    if (i + 1 < steps.size() && steps[i + 1].time > steps[i].time) {
      segments.push_back({steps[i].time, steps[i + 1].time, busy, long_busy, index_sum});
    }
  }
  return segments;
}

const Segment* segment_at(const std::vector<Segment>& segments, double t) {
  auto it = std::upper_bound(segments.begin(), segments.end(), t,
                             [](double value, const Segment& s) { return value < s.start; });
  if (it == segments.begin()) return nullptr;
  --it;
  return t < it->end ? &*it : nullptr;
}

}  // namespace

Exposure measure_exposure(const std::vector<BusyInterval>& intervals, std::vector<HangRecord> hangs,
                          std::int64_t long_context_threshold) {
  const auto engines = spans_by_engine(intervals, long_context_threshold);
  std::vector<const EngineSpans*> indexed;
  Exposure exposure;
  exposure.long_context.threshold = long_context_threshold;
  for (const auto& [name, spans] : engines) {
    indexed.push_back(&spans);
    exposure.by_engine.push_back({name});
  }
  const std::vector<Segment> segments = sweep(indexed);

  for (const Segment& s : segments) {
    const double hours = (s.end - s.start) / kSecondsPerHour;
    if (s.busy >= 1) exposure.busy_hours += hours;
    if (s.busy >= 2) exposure.dual_hours += hours;
    if (s.long_busy >= 2) exposure.long_context.two_or_more_hours += hours;
    if (s.long_busy == 1) exposure.long_context.exactly_one_hours += hours;
    if (s.busy == 1) exposure.by_engine[s.sole_engine].alone_hours += hours;
  }
  for (std::size_t e = 0; e < indexed.size(); ++e) {
    double total = 0.0;
    for (const auto& [start, end] : indexed[e]->busy) total += (end - start) / kSecondsPerHour;
    exposure.by_engine[e].with_others_hours =
        std::max(0.0, total - exposure.by_engine[e].alone_hours);
  }

  std::stable_sort(hangs.begin(), hangs.end(),
                   [](const HangRecord& a, const HangRecord& b) { return a.time < b.time; });
  for (HangRecord& hang : hangs) {
    const Segment* s = segment_at(segments, hang.time);
    HangPlacement placed{
        .hang = std::move(hang), .busy_engines = s ? s->busy : 0, .blamed_busy = false};
    if (s && s->long_busy >= 2) ++exposure.long_context.two_or_more_hangs;
    if (s && s->long_busy == 1) ++exposure.long_context.exactly_one_hangs;
    auto engine = engines.find(placed.hang.engine);
    if (engine != engines.end() && covers(engine->second.busy, placed.hang.time)) {
      placed.blamed_busy = true;
      auto& row =
          exposure.by_engine[static_cast<std::size_t>(std::distance(engines.begin(), engine))];
      ++(placed.busy_engines >= 2 ? row.with_others_hangs : row.alone_hangs);
    }
    exposure.hangs.push_back(std::move(placed));
  }
  return exposure;
}

}  // namespace baton
