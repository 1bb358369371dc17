#include "baton/engine/piece_sizer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "baton/common/context_bucket.h"

namespace baton {

PieceSizer::PieceSizer(int align) : align_(align) {
  if (align_ < 1) throw std::invalid_argument("a piece's alignment must be at least 1 row");
}

int PieceSizer::next_piece(int remaining, std::size_t context, double budget_ms) const {
  if (remaining <= align_) return remaining;
  const double per_row = ms_per_row(context);
  if (per_row <= 0.0) return align_;  // never measured: one small piece first
  const int fit = std::max(align_, static_cast<int>(budget_ms / per_row) / align_ * align_);
  if (fit >= remaining) return remaining;
  const int pieces = (remaining + fit - 1) / fit;
  const int balanced = (remaining + pieces - 1) / pieces;
  return std::min(remaining, (balanced + align_ - 1) / align_ * align_);
}

void PieceSizer::record(int rows, std::size_t context, double ms) {
  if (rows <= 0 || !(ms >= 0.0) || !std::isfinite(ms)) return;
  const double per_row = ms / rows;
  const auto [it, fresh] = ms_per_row_.try_emplace(context_bucket(context), per_row);
  if (!fresh) it->second += kWeightOfNewest * (per_row - it->second);
}

double PieceSizer::ms_per_row(std::size_t context) const {
  const auto it = ms_per_row_.find(context_bucket(context));
  return it == ms_per_row_.end() ? 0.0 : it->second;
}

}  // namespace baton
