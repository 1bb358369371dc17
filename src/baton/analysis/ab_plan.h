// The A/B planner: how many hours must a fix run without a hang before the data reject
// "the fix changes nothing" (or "the fix cuts the rate less than K-fold"), given a baseline
// of N hangs in H hours. Two methods: the exact conditional test, which treats the
// baseline's count as random too, and the plain Poisson test, which treats the baseline
// rate N/H as known (and so needs fewer hours, optimistically). Both are one-sided.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

namespace baton {

struct Baseline {
  std::int64_t events = 0;
  double hours = 0.0;
};

struct HoursNeeded {
  // Hang-free hours of the fix; empty when no amount suffices (a baseline without events).
  std::optional<double> conditional;
  std::optional<double> known_rate;
};

// Hours of hang-free exposure that reject "rate_fix >= rate_baseline / reduction" at
// `alpha`. reduction = 1 tests "the fix changes nothing".
HoursNeeded hours_needed(const Baseline& baseline, double alpha, double reduction = 1.0);

struct PValues {
  double conditional = 1.0;
  double known_rate = 1.0;
};

// The one-sided p-values reached after `hours_run` hours of the fix without a hang.
PValues p_values_so_far(const Baseline& baseline, double hours_run, double reduction = 1.0);

}  // namespace baton
