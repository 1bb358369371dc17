// How `baton analyze` shows an Analysis and an A/B comparison: a human-readable table,
// or JSON with the keys docs/analysis.md explains (snake_case, numbers as numbers, null
// where a number is undefined).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "baton/analysis/hang_analysis.h"
#include "baton/analysis/rate_statistics.h"

namespace baton {

struct Arm {
  std::string label;
  Analysis analysis;
};

struct Comparison {
  Arm a;
  Arm b;
  RateRatio ratio;  // A's hangs per busy hour over B's
  std::string verdict;
};

// Compares the arms' hangs per busy hour with the exact conditional test.
Comparison compare_arms(Arm a, Arm b, double alpha = 0.05);

nlohmann::json to_json(const Analysis& analysis);
nlohmann::json to_json(const Comparison& comparison);
void print_analysis(std::ostream& out, const Analysis& analysis);
void print_comparison(std::ostream& out, const Comparison& comparison);

}  // namespace baton
