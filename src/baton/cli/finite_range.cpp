#include "baton/cli/finite_range.h"

#include <fmt/format.h>

#include <cmath>

#include "baton/turn/turn_options.h"

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

CLI::Validator prefill_share_check() {
  const auto check = [](std::string& input) -> std::string {
    if (parse_prefill_share(input)) return {};
    return "'" + input + "' is neither weights, auto nor a number between 0.01 and 1";
  };
  return CLI::Validator(check, "weights|auto|FLOAT in [0.01, 1]");
}

}  // namespace baton
