#include "baton/engine/piece_sizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "baton/common/context_bucket.h"

namespace baton {

PieceSizer::PieceSizer(int align) : align_(align) {
  if (align_ < 1) throw std::invalid_argument("a piece's alignment must be at least 1 row");
}

// Least squares through every size's time; with one size, or a fit that makes no sense
// (noise: a negative fixed cost or per-row cost), time in proportion to rows, which never
// underestimates a larger piece of a shape with a fixed cost.
PieceSizer::Line PieceSizer::fit(const Times& times) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [rows, ms] : times) {
    n += 1;
    sx += rows;
    sy += ms;
    sxx += static_cast<double>(rows) * rows;
    sxy += rows * ms;
  }
  const double spread = n * sxx - sx * sx;
  if (n >= 2 && spread > 0) {
    const double per_row = (n * sxy - sx * sy) / spread;
    const double fixed = (sy - per_row * sx) / n;
    if (per_row > 0 && fixed >= 0) return {.fixed_ms = fixed, .per_row_ms = per_row};
  }
  return {.fixed_ms = 0.0, .per_row_ms = sy / sx};
}

bool PieceSizer::aligned(int rows) const {
  const int tiles = rows / align_;
  return rows % align_ == 0 && (tiles & (tiles - 1)) == 0;
}

// Time never falls as rows grow: a size measured slower than a larger one carries a
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

int PieceSizer::next_piece(int remaining, std::size_t context, double budget_ms) const {
  if (remaining <= align_) return remaining;
  const auto it = times_.find(context_bucket(context));
  if (it == times_.end()) return align_;  // never measured: one small piece first
  const Times times = monotone(it->second);
  double cheapest = times.begin()->second;
  int smallest = 0;
  int largest = 0;
  for (const auto& [rows, ms] : times) {
    cheapest = std::min(cheapest, ms);
    if (!aligned(rows)) continue;
    if (smallest == 0) smallest = rows;
    largest = rows;
  }
  const bool attainable = cheapest <= budget_ms;
  // Over the budget: first a smaller piece, which shows whether the time shrinks with
  // the rows (then the budget can be met) or is mostly fixed.
  if (!attainable && smallest > align_) return smallest / 2;
  const double limit = attainable ? budget_ms : kUnattainableSlack * cheapest;
  const Line line = fit(times);
  // A fixed cost is extrapolated at most 4x past the largest size measured.
  const int cap = line.fixed_ms > 0 && largest > 0 ? 4 * largest : remaining;
  const auto fits = [&](int rows) { return rows <= cap && line.at(rows) <= limit; };
  if (fits(remaining)) return remaining;
  int piece = align_;
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
void PieceSizer::record(int rows, std::size_t context, double ms) {
  if (rows <= 0 || !(ms >= 0.0) || !std::isfinite(ms)) return;
  const std::size_t bucket = context_bucket(context);
  Times& times = times_[bucket];
  if (!times.empty() && warmed_[bucket].insert(rows).second && !times.contains(rows)) return;
  const auto [it, fresh] = times.try_emplace(rows, ms);
  if (!fresh) it->second += kWeightOfNewest * (ms - it->second);
}

double PieceSizer::ms_per_row(std::size_t context) const {
  const auto it = times_.find(context_bucket(context));
  return it == times_.end() ? 0.0 : fit(it->second).per_row_ms;
}

}  // namespace baton
