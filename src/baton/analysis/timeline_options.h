// TimelineOptions: how `analyze --timeline` draws (timeline_svg.h), shared by its lanes.
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace baton {

struct TimelineOptions {
  int width = 1200;                          // pixels; at least 480 is used
  std::optional<std::int64_t> long_context;  // intervals at or above are drawn darker
  std::string title;                         // empty: "baton timeline"
  bool collapse_idle_gaps = true;            // false: one continuous axis, gaps to scale
};

}  // namespace baton
