// An SVG timeline of an ExposureInput, for `baton analyze --plot FILE.svg`: one lane per
// engine with its busy intervals, a band where two or more engines are busy at once
// ("dual" time), the hangs and other faults as vertical markers, a UTC time axis and a
// legend.
//
// Long idle gaps are cut out of the time axis (timeline_axis.h says which and why), so a
// ledger of a few busy days over a month gives each busy stretch the width its own
// duration earns instead of a sliver; each cut is a narrow break with the idle time written
// in it, and the ticks on each side are true UTC times.
//
// The output stays small however many intervals there are: intervals of one engine that
// would be drawn less than a pixel apart are drawn as one rectangle, so the size is
// bounded by the width times the number of lanes, not by the number of intervals.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "baton/analysis/exposure_input.h"
#include "baton/analysis/timeline_options.h"

namespace baton {

// The whole SVG document. An input without intervals or hangs gives a small document
// that says "no data". Never throws except std::bad_alloc.
[[nodiscard]] std::string render_timeline_svg(const ExposureInput& input,
                                              const TimelineOptions& options);

// Renders and writes to `path` (replacing it). Throws std::runtime_error naming the path
// when the file cannot be opened or written.
void write_timeline_svg(const std::filesystem::path& path, const ExposureInput& input,
                        const TimelineOptions& options);

}  // namespace baton
