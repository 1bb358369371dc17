// PieceSizer: how many rows of a prefill layer fit in one piece of bounded device time.
// Under serialize/op a waiting engine may be held behind at most one piece of another
// engine's prefill (GpuTurn::piece_budget_ms), so a layer of a long chunk is cut into
// row ranges whose time is measured: the sizer keeps the time per row of each shape (the
// power-of-two bucket of the context the rows attend to, since attention grows with it)
// as a moving average of the pieces that ran, so a shape whose cost drifts (clocks, another
// process on the device) is re-measured by every piece. A shape never measured starts with
// one small piece.
// Thread-safety: none; the engine thread owns it.
#pragma once

#include <cstddef>
#include <map>

namespace baton {

class PieceSizer {
 public:
  // Pieces are `align` rows (tensor-core tiles on a GPU) times a power of two.
  explicit PieceSizer(int align = 32);

  // The rows of the next piece: `remaining` rows of a layer are left, attending to up to
  // `context` positions, and a piece may take `budget_ms`. The largest power-of-two
  // multiple of `align` that fits (at least `align`), or all of `remaining` when that fits:
  // few distinct shapes, since each new one costs the GPU a kernel load (10-17 ms measured
  // on the H200 for a piece of a new size) and cuBLAS a heuristic.
  int next_piece(int remaining, std::size_t context, double budget_ms) const;
  // A piece of `rows` rows at `context` took `ms` (from launch to completion).
  void record(int rows, std::size_t context, double ms);
  // The measured time per row of `context`'s shape; 0 when never measured.
  double ms_per_row(std::size_t context) const;

 private:
  static constexpr double kWeightOfNewest = 0.3;
  const int align_;
  std::map<std::size_t, double> ms_per_row_;  // by context bucket
};

}  // namespace baton
