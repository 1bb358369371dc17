#include "baton/engine/llm/piece_sizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "baton/common/context_bucket.h"

namespace baton {

PieceSizer::Key PieceSizer::key_of(const PieceShape& shape) {
  return {shape.part, context_bucket(shape.context)};
}

// Least squares through every size's time; with one size, or a fit that makes no sense
// (noise: a negative fixed cost or per-unit cost), time in proportion to units, which
// never underestimates a larger piece of a shape with a fixed cost.
PieceSizer::Line PieceSizer::fit(const Times& times) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [units, ms] : times) {
    n += 1;
    sx += units;
    sy += ms;
    sxx += static_cast<double>(units) * units;
    sxy += units * ms;
  }
  const double spread = n * sxx - sx * sx;
  if (n >= 2 && spread > 0) {
    const double per_unit = (n * sxy - sx * sy) / spread;
    const double fixed = (sy - per_unit * sx) / n;
    if (per_unit > 0 && fixed >= 0) return {.fixed_ms = fixed, .per_unit_ms = per_unit};
  }
  return {.fixed_ms = 0.0, .per_unit_ms = sy / sx};
}

// Time never falls as units grow: a size measured slower than a larger one carries a
// stale or one-off time (a first launch), which would otherwise keep the pieces small.
PieceSizer::Times PieceSizer::monotone(const Times& times) {
  Times kept;
  double faster = std::numeric_limits<double>::infinity();
  for (auto it = times.rbegin(); it != times.rend(); ++it) {
    if (it->second > faster) continue;
    kept.emplace(it->first, it->second);
    faster = it->second;
  }
  return kept;
}

// A fixed cost is extrapolated at most 4x past the largest size measured.
int PieceSizer::extrapolation_cap(const Times& times, const Line& line) {
  const int largest = times.empty() ? 0 : times.rbegin()->first;
  return line.fixed_ms > 0 && largest > 0 ? 4 * largest : std::numeric_limits<int>::max();
}

int PieceSizer::next_piece(const PieceShape& shape, int remaining, double budget_ms) const {
  const int align = shape.align;
  if (align < 1) throw std::invalid_argument("a piece's alignment must be at least 1 unit");
  if (remaining <= align) return remaining;
  const auto it = times_.find(key_of(shape));
  if (it == times_.end()) return align;  // never measured: one small piece first
  const Times times = monotone(it->second);
  double cheapest = times.begin()->second;
  int smallest = 0;
  int largest = 0;
  for (const auto& [units, ms] : times) {
    cheapest = std::min(cheapest, ms);
    if (!is_piece_size(units, align)) continue;
    if (smallest == 0) smallest = units;
    largest = units;
  }
  const bool attainable = cheapest <= budget_ms;
  // Over the budget: first a smaller piece, which shows whether the time shrinks with
  // the units (then the budget can be met) or is mostly fixed.
  if (!attainable && smallest > align) return smallest / 2;
  const double limit = attainable ? budget_ms : kUnattainableSlack * cheapest;
  const Line line = fit(times);
  const int cap = extrapolation_cap(times, line);
  const auto fits = [&](int units) { return units <= cap && line.at(units) <= limit; };
  if (fits(remaining)) return remaining;
  int piece = align;
  while (piece * 2 < remaining && fits(piece * 2)) piece *= 2;
  // The smallest piece is over the budget, no fixed cost is known yet, and the largest
  // measured is within the slack: one size up, as only a measurement shows how much of
  // the time is fixed.
  const int up = largest * 2;
  if (!attainable && line.fixed_ms == 0 && largest > 0 && piece < up && up < remaining &&
      !times.contains(up) && times.at(largest) <= limit) {
    piece = up;
  }
  return piece;
}

// A size's first piece in a shape that already has a time is a warm-up: on the H200 a
// piece of a new size pays its kernel loads (10-17 ms), which would rule the size out.
void PieceSizer::record(const PieceShape& shape, int units, double ms) {
  if (units <= 0 || !(ms >= 0.0) || !std::isfinite(ms)) return;
  const Key key = key_of(shape);
  Times& times = times_[key];
  if (!times.empty() && warmed_[key].insert(units).second && !times.contains(units)) return;
  const auto [it, fresh] = times.try_emplace(units, ms);
  if (!fresh) it->second += kWeightOfNewest * (ms - it->second);
}

std::optional<double> PieceSizer::predict(const PieceShape& shape, int units) const {
  const auto it = times_.find(key_of(shape));
  if (it == times_.end()) return std::nullopt;
  const Times times = monotone(it->second);
  const Line line = fit(times);
  if (units > extrapolation_cap(times, line)) return std::nullopt;
  return line.at(units);
}

double PieceSizer::ms_per_unit(const PieceShape& shape) const {
  const auto it = times_.find(key_of(shape));
  return it == times_.end() ? 0.0 : fit(it->second).per_unit_ms;
}

}  // namespace baton
