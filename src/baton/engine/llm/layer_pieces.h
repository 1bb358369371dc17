// The pieces of one prefill layer under a hold budget: the layer's parts (ModelStep's
// cut_layer) walked in order, each cut into pieces that PieceSizer sizes, and consecutive
// parts packed into one piece while the sizer predicts that they fit together, so that a
// layer far under the budget is not cut at every part (each piece costs a wait on the
// device and a hand-over check).
// Thread-safety: none; the engine thread owns it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "baton/engine/llm/piece_sizer.h"
#include "baton/gpu/command_buffer.h"
#include "baton/model/runner/model_runner.h"

namespace baton {

struct PieceSegment {
  std::size_t part = 0;              // an index into the layer's parts
  LayerPart kind = LayerPart::rows;  // that part's, for ModelStep::run_piece
  int first = 0;
  int count = 0;
};

// The op that runs `piece`, its segments of layer `layer` in order, on `step`.
Op piece_op(std::shared_ptr<ModelStep> step, int layer, std::vector<PieceSegment> piece);

class LayerPieces {
 public:
  // `sizer` must outlive this walk.
  LayerPieces(PieceSizer& sizer, std::vector<PartCut> parts, std::size_t context, double budget_ms);

  bool done() const { return part_ == parts_.size(); }
  // The next piece: one cut of the current part, or the rest of it and the whole parts
  // after it while they are predicted to fit the budget together. Advances the walk.
  std::vector<PieceSegment> next();
  // The piece `next()` returned took `ms`: each of its segments is recorded, a packed
  // piece's time split in proportion to its segments' predictions.
  void record(std::span<const PieceSegment> piece, double ms);
  // The share of the layer's parts a piece covers (its units over each part's, summed,
  // over the parts' count): what a mean piece size is measured in.
  double layer_share(std::span<const PieceSegment> piece) const;

 private:
  PieceShape shape_of(std::size_t part) const;
  PieceSegment segment(std::size_t part, int first, int count) const;

  PieceSizer& sizer_;
  const std::vector<PartCut> parts_;
  const std::size_t context_;
  const double budget_ms_;
  std::size_t part_ = 0;  // the walk: the next unit to run
  int first_ = 0;
};

}  // namespace baton
