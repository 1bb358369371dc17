// finite_range: CLI11's Range check for floating-point flags, refusing NaN and infinity
// too. CLI::Range lets NaN through (it compares false with both bounds), and a NaN
// duration or rate then runs nothing and reports success.
// Thread-safety: the validator holds only its bounds.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace baton {

inline CLI::Validator finite_range(double min, double max) {
  const std::string range = "[" + CLI::detail::to_string(min) + " - " +
                            CLI::detail::to_string(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value)) return "Value " + input + " is not a number";
        if (!std::isfinite(value) || value < min || value > max) {
          return "Value " + input + " not in range " + range;
        }
        return {};
      },
      "FLOAT in " + range);
}

}  // namespace baton
