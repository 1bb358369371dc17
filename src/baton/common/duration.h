// Durations on the command line: "45m", "30s", "2h", "1d", "1.5h", or plain seconds ("90").
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <string_view>

namespace baton {

// Seconds, or empty when `text` is not a non-negative finite duration.
std::optional<double> parse_duration_seconds(std::string_view text);

}  // namespace baton
