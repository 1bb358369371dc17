#include "baton/engine/llm/layer_pieces.h"

#include <optional>
#include <utility>
#include <vector>

namespace baton {

Op piece_op(std::shared_ptr<ModelStep> step, int layer, std::vector<PieceSegment> piece) {
  return Op{.run =
                [step = std::move(step), layer, piece = std::move(piece)] {
                  for (const PieceSegment& s : piece) {
                    step->run_piece(layer, s.kind, s.first, s.count);
                  }
                },
            .bytes = 0};
}

LayerPieces::LayerPieces(PieceSizer& sizer, std::vector<PartCut> parts, std::size_t context,
                         double budget_ms)
    : sizer_(sizer), parts_(std::move(parts)), context_(context), budget_ms_(budget_ms) {
  while (part_ < parts_.size() && parts_[part_].units == 0) ++part_;
}

PieceShape LayerPieces::shape_of(std::size_t part) const {
  return {.part = parts_[part].part, .align = parts_[part].align, .context = context_};
}

PieceSegment LayerPieces::segment(std::size_t part, int first, int count) const {
  return {.part = part, .kind = parts_[part].part, .first = first, .count = count};
}

std::vector<PieceSegment> LayerPieces::next() {
  std::vector<PieceSegment> piece;
  if (done()) return piece;
  const int remaining = parts_[part_].units - first_;
  const int count = sizer_.next_piece(shape_of(part_), remaining, budget_ms_);
  piece.push_back(segment(part_, first_, count));
  if (count < remaining) {
    first_ += count;
    return piece;
  }
  // The part's rest fits (or is one alignment): the parts after it join while the sum of
  // predictions stays within the budget. A part never measured is not packed, so that
  // the sizer learns it on a piece of its own.
  std::optional<double> total = sizer_.predict(shape_of(part_), remaining);
  first_ = 0;
  for (++part_; part_ < parts_.size(); ++part_) {
    const int units = parts_[part_].units;
    if (units == 0) continue;
    const std::optional<double> alone = sizer_.predict(shape_of(part_), units);
    if (!total || !alone || *total + *alone > budget_ms_) break;
    *total += *alone;
    piece.push_back(segment(part_, 0, units));
  }
  return piece;
}

void LayerPieces::record(std::span<const PieceSegment> piece, double ms) {
  if (piece.size() == 1) {
    sizer_.record(shape_of(piece[0].part), piece[0].count, ms);
    return;
  }
  std::vector<double> predicted;
  double sum = 0.0;
  for (const PieceSegment& s : piece) {
    predicted.push_back(sizer_.predict(shape_of(s.part), s.count).value_or(0.0));
    sum += predicted.back();
  }
  if (sum <= 0.0) return;
  for (std::size_t i = 0; i < piece.size(); ++i) {
    sizer_.record(shape_of(piece[i].part), piece[i].count, ms * predicted[i] / sum);
  }
}

double LayerPieces::layer_share(std::span<const PieceSegment> piece) const {
  double share = 0.0;
  for (const PieceSegment& s : piece) {
    share += static_cast<double>(s.count) / parts_[s.part].units;
  }
  return parts_.empty() ? 0.0 : share / static_cast<double>(parts_.size());
}

}  // namespace baton
