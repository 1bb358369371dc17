// PieceSizer: how many units (rows, output columns or KV heads: model_runner.h's PartCut) of
// a part of a prefill layer fit in one piece of bounded device time.
// Under serialize/op a waiting engine may be held behind at most one piece of another
// engine's prefill (GpuTurn::piece_budget_ms), so a layer of a long chunk is cut into
// unit ranges whose time is measured. Per shape (the layer part, and the power-of-two
// bucket of the context its rows attend to, since attention grows with it) the sizer keeps
// a moving average of each piece size's time, so a shape whose cost drifts is re-measured
// by every piece, and fits time = fixed + units x per-unit through them: on a GPU a piece
// of rows has a fixed cost (at 8K context on the H200, 1.8 ms for 64 rows, a third of the
// whole 2048-row layer's attention), so a budget below it cannot be met. Then pieces grow
// to what costs at most
// kUnattainableSlack times the cheapest piece measured: the waiter is held barely longer,
// and the prefill no longer runs at an eighth of its rate. To tell a fixed cost from a
// proportional one it measures one smaller size (or, at the smallest, one larger size,
// once). A shape never measured starts with one small piece. A size's first piece in a
// measured shape is a warm-up, not timed, and a size slower than a larger one is ignored.
// Thread-safety: none; the engine thread owns it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "baton/model/runner/model_runner.h"

namespace baton {

struct PieceShape {
  LayerPart part = LayerPart::rows;
  int align = 32;           // pieces are `align` units (tensor-core tiles) times a power of two
  std::size_t context = 0;  // the positions the step's rows attend to
};

class PieceSizer {
 public:
  static constexpr double kUnattainableSlack = 1.25;

  // The units of the next piece of `shape`: `remaining` units of the part are left, and a
  // piece may take `budget_ms`. The largest power-of-two multiple of the alignment
  // predicted to fit (at least one alignment), or all of `remaining` when that fits: few
  // distinct sizes, since each new one costs the GPU a kernel load (10-17 ms measured on
  // the H200 for a piece of a new size) and cuBLAS a heuristic. std::invalid_argument for
  // an alignment below 1.
  int next_piece(const PieceShape& shape, int remaining, double budget_ms) const;
  // A piece of `units` units of `shape` took `ms` (from launch to completion).
  void record(const PieceShape& shape, int units, double ms);
  // What `units` units of `shape` are predicted to take: nullopt when the shape was never
  // measured or `units` is over 4x the largest size measured (a fit is not stretched).
  std::optional<double> predict(const PieceShape& shape, int units) const;
  // The fitted time per unit of `shape` (its time alone when one size was measured); 0
  // when never measured.
  double ms_per_unit(const PieceShape& shape) const;

 private:
  struct Line {
    double fixed_ms = 0.0;
    double per_unit_ms = 0.0;
    double at(int units) const { return fixed_ms + per_unit_ms * units; }
  };
  using Times = std::map<int, double>;            // units -> moving average of ms
  using Key = std::pair<LayerPart, std::size_t>;  // the part, the context bucket
  static Key key_of(const PieceShape& shape);
  static Line fit(const Times& times);
  static Times monotone(const Times& times);
  // Sizes over this many units are not predicted from a line with a fixed cost.
  static int extrapolation_cap(const Times& times, const Line& line);

  static constexpr double kWeightOfNewest = 0.3;
  std::map<Key, Times> times_;
  std::map<Key, std::set<int>> warmed_;  // sizes whose warm-up piece ran
};

}  // namespace baton
