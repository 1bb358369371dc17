// PieceSizer: one small piece for a shape never measured, then pieces sized to the budget
// from the measured times (power-of-two multiples of the alignment), per layer part and
// context bucket, following a shape whose cost drifts, and past a budget that a fixed cost
// makes unattainable.
#include "baton/engine/llm/piece_sizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace baton {
namespace {

// Rows of a layer attending to `context` positions, in pieces of `align` rows times 2^k.
PieceShape rows_at(std::size_t context, int align = 32) {
  return {.part = LayerPart::rows, .align = align, .context = context};
}

TEST(PieceSizer, AShapeNeverMeasuredStartsWithOneAlignedPiece) {
  const PieceSizer sizer;
  EXPECT_EQ(sizer.next_piece(rows_at(4096), 2048, 1.0), 32);
  EXPECT_EQ(sizer.next_piece(rows_at(4096), 20, 1.0), 20);  // a rest within one alignment: whole
}

TEST(PieceSizer, PiecesFitTheBudgetFromTheMeasuredTimePerRow) {
  PieceSizer sizer;
  sizer.record(rows_at(2048), 32, 0.32);  // 0.01 ms per row
  EXPECT_DOUBLE_EQ(sizer.ms_per_unit(rows_at(2048)), 0.01);
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 1.0), 64);   // 100 rows fit: 32 x 2
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 2.6), 256);  // 260 fit: 32 x 8
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 90, 1.0), 90);     // the rest fits whole
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 130, 2.6), 130);
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 300, 2.6), 256);
  // A budget below the smallest piece: one size up, once, to see how much is fixed.
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 0.05), 64);
}

TEST(PieceSizer, EachContextBucketIsMeasuredApart) {
  PieceSizer sizer;
  sizer.record(rows_at(1000, 16), 64, 0.64);  // bucket of 512-1023
  sizer.record(rows_at(5000, 16), 64, 2.56);  // bucket of 4096-8191: attention over more keys
  EXPECT_DOUBLE_EQ(sizer.ms_per_unit(rows_at(600, 16)), 0.01);
  EXPECT_DOUBLE_EQ(sizer.ms_per_unit(rows_at(8000, 16)), 0.04);
  EXPECT_EQ(sizer.ms_per_unit(rows_at(3000, 16)), 0.0);
  EXPECT_EQ(sizer.next_piece(rows_at(1000, 16), 1024, 1.0), 64);  // 100 fit: 16 x 4
  // 25 would fit if time were in proportion, but 64 rows are over the budget: half of
  // them first, to see whether the time shrinks.
  EXPECT_EQ(sizer.next_piece(rows_at(8000, 16), 1024, 1.0), 32);
}

TEST(PieceSizer, AShapeWhoseCostDriftsIsFollowed) {
  PieceSizer sizer;
  sizer.record(rows_at(2048), 100, 1.0);  // 0.01 ms per row
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 1.3), 128);
  for (int i = 0; i < 20; ++i) sizer.record(rows_at(2048), 100, 2.0);  // the device got slower
  EXPECT_NEAR(sizer.ms_per_unit(rows_at(2048)), 0.02, 1e-4);
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 1.3), 64);  // 65 fit
}

// What a piece of `rows` rows costs, and the pieces a sizer picks for a 2048-row layer
// against it over `layers` layers: the longest piece's time, and the rows of the last.
struct LayersRun {
  double longest_ms = 0;
  int last_rows = 0;
};
template <typename Cost>
LayersRun run_layers(PieceSizer& sizer, Cost cost, double budget_ms, int layers) {
  LayersRun run;
  for (int layer = 0; layer < layers; ++layer) {
    for (int first = 0; first < 2048;) {
      const int rows = sizer.next_piece(rows_at(8000), 2048 - first, budget_ms);
      sizer.record(rows_at(8000), rows, cost(rows));
      run.longest_ms = std::max(run.longest_ms, cost(rows));
      run.last_rows = rows;
      first += rows;
    }
  }
  return run;
}

// The H200 at 8K context: a piece costs 1.8 ms however few its rows, so a 0.5 ms budget
// cannot be met. The sizer learns the fixed cost and grows the pieces to 1.25x the
// cheapest (256 rows, 2.21 ms), instead of 64 pieces a layer at eight times the rate.
TEST(PieceSizer, AFixedCostAboveTheBudgetGrowsThePiecesToTheSlack) {
  PieceSizer sizer;
  const auto cost = [](int rows) { return 1.8 + 0.0016 * rows; };
  const LayersRun run = run_layers(sizer, cost, 0.5, 4);
  EXPECT_EQ(run.last_rows, 256);
  EXPECT_LE(run.longest_ms, PieceSizer::kUnattainableSlack * cost(32));
  EXPECT_EQ(sizer.next_piece(rows_at(8000), 2048, 0.5), 256);
}

// The CPU: time in proportion to rows, and the smallest piece already over the budget.
// One larger piece shows it, and then the pieces stay at the smallest.
TEST(PieceSizer, TimeInProportionToRowsKeepsTheSmallestPiece) {
  PieceSizer sizer;
  const auto cost = [](int rows) { return 0.02 * rows; };
  const LayersRun run = run_layers(sizer, cost, 0.5, 4);
  EXPECT_EQ(run.last_rows, 32);
  EXPECT_DOUBLE_EQ(run.longest_ms, cost(64));  // the one look above
  EXPECT_EQ(sizer.next_piece(rows_at(8000), 2048, 0.5), 32);
}

// The H200 at 8K context, where a piece of a size never run before pays its kernel loads
// (15 ms here) once. Timing those would rule out every size tried after the first and
// keep 32-row pieces at a 2 ms budget (measured at 3a3f312); warm-ups are not timed.
TEST(PieceSizer, TheFirstLaunchOfASizeDoesNotKeepThePiecesSmall) {
  PieceSizer sizer;
  std::set<int> launched;
  const auto cost = [&](int rows) {
    return launched.insert(rows).second ? 15.0 : 0.3 + 0.002 * rows;
  };
  const LayersRun run = run_layers(sizer, cost, 2.0, 4);
  EXPECT_EQ(run.last_rows, 512);  // 1.32 ms; 1024 rows would take 2.35
  EXPECT_EQ(sizer.next_piece(rows_at(8000), 2048, 2.0), 512);
}

// Time that falls as rows grow is a stale time: the faster, larger size is believed.
TEST(PieceSizer, ASizeSlowerThanALargerOneIsIgnored) {
  PieceSizer sizer;
  sizer.record(rows_at(2048), 32, 5.0);   // a one-off: the shape's first piece
  sizer.record(rows_at(2048), 64, 9.9);   // warm-up of a new size: not timed
  sizer.record(rows_at(2048), 64, 0.64);  // 0.01 ms per row
  EXPECT_EQ(sizer.next_piece(rows_at(2048), 2048, 2.6), 256);
}

TEST(PieceSizer, NonsenseMeasurementsAreIgnored) {
  PieceSizer sizer;
  sizer.record(rows_at(2048), 0, 1.0);
  sizer.record(rows_at(2048), 10, -1.0);
  sizer.record(rows_at(2048), 10, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(sizer.ms_per_unit(rows_at(2048)), 0.0);
  EXPECT_THROW((void)sizer.next_piece(rows_at(2048, 0), 100, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace baton
