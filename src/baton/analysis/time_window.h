// A time window of an analysis (`baton analyze --since/--until`): the busy intervals and
// GPU polls clipped to it and only the events in it, so that every figure is of that window alone.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "baton/analysis/exposure_input.h"

namespace baton {

// `input` within [since, until); an absent end is open. Intervals that end up empty go.
ExposureInput within_window(ExposureInput input, std::optional<double> since,
                            std::optional<double> until);

// A window's end as given on the command line: a time parse_time() reads (Unix seconds or
// ISO-8601 with an offset), or a UTC date "2026-10-02" for its midnight. nullopt otherwise.
std::optional<double> parse_window_end(std::string_view text);

}  // namespace baton
