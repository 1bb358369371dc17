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
  const int fit = static_cast<int>(budget_ms / per_row);
  if (fit >= remaining) return remaining;
  int piece = align_;
  while (piece * 2 <= fit && piece * 2 < remaining) piece *= 2;
  return piece;
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
