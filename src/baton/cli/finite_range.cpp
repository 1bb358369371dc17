#include "baton/cli/finite_range.h"

#include <fmt/format.h>

#include <cmath>

namespace baton {

CLI::Validator finite_range(double min, double max) {
  const auto check = [min, max](std::string& input) -> std::string {
    double value = 0.0;
    if (!CLI::detail::lexical_cast(input, value)) return "'" + input + "' is not a number";
    if (!std::isfinite(value)) return "'" + input + "' is not a finite number";
    if (value < min || value > max) {
      return fmt::format("{} is not between {:g} and {:g}", input, min, max);
    }
    return {};
  };
  return CLI::Validator(check, fmt::format("FLOAT in [{:g}, {:g}]", min, max));
}

}  // namespace baton
