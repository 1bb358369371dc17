#include "baton/turn/fair_share.h"

#include <cmath>

#include <fmt/format.h>

namespace baton {

std::optional<std::string> weight_problem(double weight) {
  if (std::isfinite(weight) && weight >= kMinTurnWeight && weight <= kMaxTurnWeight) {
    return std::nullopt;
  }
  return fmt::format("a turn weight must be a number in {}..{}, not {}", kMinTurnWeight,
                     kMaxTurnWeight, weight);
}

}  // namespace baton
