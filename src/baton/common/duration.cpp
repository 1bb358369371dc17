#include "baton/common/duration.h"

#include <charconv>
#include <cmath>

namespace baton {

std::optional<double> parse_duration_seconds(std::string_view text) {
  double unit = 1.0;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        text.remove_suffix(1);
        break;
      case 'm':
        unit = 60.0;
        text.remove_suffix(1);
        break;
      case 'h':
        unit = 3600.0;
        text.remove_suffix(1);
        break;
      case 'd':
        unit = 86400.0;
        text.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0.0) {
    return std::nullopt;
  }
  return value * unit;
}

}  // namespace baton
