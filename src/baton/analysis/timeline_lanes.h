// The timeline's data (timeline_svg): one lane per engine with its busy intervals (long
// contexts apart), where two or more engines were busy, when anything happened, and the
// time the input spans. Pure functions of an ExposureInput.
// Thread-safety: values and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/analysis/exposure_input.h"
#include "baton/analysis/spans.h"
#include "baton/analysis/timeline_options.h"

namespace baton::timeline {

struct EngineRows {
  Spans normal;        // sorted by start
  Spans long_context;  // sorted by start
};
using Lanes = std::map<std::string, EngineRows>;  // one lane per engine, sorted by name

// Each engine's intervals, a lane for each engine with a fault marker.
Lanes collect_lanes(const ExposureInput& input, const TimelineOptions& options);
// Where at least two engines are busy (an engine overlapping itself is not dual).
Spans dual_time(const Lanes& lanes);
double total(const Spans& spans);
// When anything happened: every engine's intervals and every fault (an instant), joined.
Spans busy_spans(const Lanes& lanes, const std::vector<HangRecord>& hangs);

struct Range {
  double t0;
  double t1;
};
// The earliest and latest instant of the input; none when it has nothing to draw.
std::optional<Range> data_range(const ExposureInput& input);

}  // namespace baton::timeline
