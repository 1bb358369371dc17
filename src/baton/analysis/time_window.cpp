#include "baton/analysis/time_window.h"

#include <algorithm>
#include <limits>
#include <string>

#include "baton/analysis/iso_time.h"

namespace baton {

ExposureInput within_window(ExposureInput input, std::optional<double> since,
                            std::optional<double> until) {
  const double low = since.value_or(-std::numeric_limits<double>::infinity());
  const double high = until.value_or(std::numeric_limits<double>::infinity());
  const auto clip = [&](auto& intervals) {
    for (auto& interval : intervals) {
      interval.start = std::max(interval.start, low);
      interval.end = std::min(interval.end, high);
    }
    std::erase_if(intervals, [](const auto& interval) { return !(interval.end > interval.start); });
  };
  clip(input.intervals);
  if (input.stream_intervals) clip(*input.stream_intervals);
  clip(input.gpu_polls);
  std::erase_if(input.hangs, [&](const HangRecord& h) { return h.time < low || h.time >= high; });
  return input;
}

std::optional<double> parse_window_end(std::string_view text) {
  if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
    return parse_time(std::string(text) + "T00:00:00Z");
  }
  return parse_time(text);
}

}  // namespace baton
