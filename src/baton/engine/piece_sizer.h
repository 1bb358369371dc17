// PieceSizer: how many rows of a prefill layer fit in one piece of bounded device time.
// Under serialize/op a waiting engine may be held behind at most one piece of another
// engine's prefill (GpuTurn::piece_budget_ms), so a layer of a long chunk is cut into
// row ranges whose time is measured. Per shape (the power-of-two bucket of the context the
// rows attend to, since attention grows with it) the sizer keeps a moving average of each
// piece size's time, so a shape whose cost drifts is re-measured by every piece, and fits
// time = fixed + rows x per-row through them: on a GPU a piece has a fixed cost (at 8K
// context on the H200, 1.8 ms for 64 rows, a third of the whole 2048-row layer's
// attention), so a budget below it cannot be met. Then pieces grow to what costs at most
// kUnattainableSlack times the cheapest piece measured: the waiter is held barely longer,
// and the prefill no longer runs at an eighth of its rate. To tell a fixed cost from a
// proportional one it measures one smaller size (or, at the smallest, one larger size,
// once). A shape never measured starts with one small piece. A size's first piece in a
// measured shape is a warm-up, not timed, and a size slower than a larger one is ignored.
// Thread-safety: none; the engine thread owns it.
#pragma once

#include <cstddef>
#include <map>
#include <set>

namespace baton {

class PieceSizer {
 public:
  static constexpr double kUnattainableSlack = 1.25;

  // Pieces are `align` rows (tensor-core tiles on a GPU) times a power of two.
  explicit PieceSizer(int align = 32);

  // The rows of the next piece: `remaining` rows of a layer are left, attending to up to
  // `context` positions, and a piece may take `budget_ms`. The largest power-of-two
  // multiple of `align` predicted to fit (at least `align`), or all of `remaining` when
  // that fits: few distinct shapes, since each new one costs the GPU a kernel load (10-17
  // ms measured on the H200 for a piece of a new size) and cuBLAS a heuristic.
  int next_piece(int remaining, std::size_t context, double budget_ms) const;
  // A piece of `rows` rows at `context` took `ms` (from launch to completion).
  void record(int rows, std::size_t context, double ms);
  // The fitted time per row of `context`'s shape (its time alone when one size was
  // measured); 0 when never measured.
  double ms_per_row(std::size_t context) const;

 private:
  struct Line {
    double fixed_ms = 0.0;
    double per_row_ms = 0.0;
    double at(int rows) const { return fixed_ms + per_row_ms * rows; }
  };
  using Times = std::map<int, double>;  // rows -> moving average of ms
  static Line fit(const Times& times);
  static Times monotone(const Times& times);
  // A power-of-two multiple of align_ (a size next_piece picks, not a layer's rest).
  bool aligned(int rows) const;

  static constexpr double kWeightOfNewest = 0.3;
  const int align_;
  std::map<std::size_t, Times> times_;  // by context bucket
  std::map<std::size_t, std::set<int>> warmed_;  // sizes whose warm-up piece ran, by bucket
};

}  // namespace baton
