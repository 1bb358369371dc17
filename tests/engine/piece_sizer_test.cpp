// PieceSizer: one small piece for a shape never measured, then pieces sized to the budget
// from the measured times (power-of-two multiples of the alignment), per context bucket,
// following a shape whose cost drifts, and past a budget that a fixed cost makes
// unattainable.
#include "baton/engine/piece_sizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace baton {
namespace {

TEST(PieceSizer, AShapeNeverMeasuredStartsWithOneAlignedPiece) {
  const PieceSizer sizer(32);
  EXPECT_EQ(sizer.next_piece(2048, 4096, 1.0), 32);
  EXPECT_EQ(sizer.next_piece(20, 4096, 1.0), 20);  // a rest within one alignment: whole
}

TEST(PieceSizer, PiecesFitTheBudgetFromTheMeasuredTimePerRow) {
  PieceSizer sizer(32);
  sizer.record(32, 2048, 0.32);  // 0.01 ms per row
  EXPECT_DOUBLE_EQ(sizer.ms_per_row(2048), 0.01);
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.0), 64);   // 100 rows fit: 32 x 2
  EXPECT_EQ(sizer.next_piece(2048, 2048, 2.6), 256);  // 260 fit: 32 x 8
  EXPECT_EQ(sizer.next_piece(90, 2048, 1.0), 90);     // the rest fits whole
  EXPECT_EQ(sizer.next_piece(130, 2048, 2.6), 130);
  EXPECT_EQ(sizer.next_piece(300, 2048, 2.6), 256);
  // A budget below the smallest piece: one size up, once, to see how much is fixed.
  EXPECT_EQ(sizer.next_piece(2048, 2048, 0.05), 64);
}

TEST(PieceSizer, EachContextBucketIsMeasuredApart) {
  PieceSizer sizer(16);
  sizer.record(64, 1000, 0.64);  // bucket of 512-1023
  sizer.record(64, 5000, 2.56);  // bucket of 4096-8191: attention over more keys
  EXPECT_DOUBLE_EQ(sizer.ms_per_row(600), 0.01);
  EXPECT_DOUBLE_EQ(sizer.ms_per_row(8000), 0.04);
  EXPECT_EQ(sizer.ms_per_row(3000), 0.0);
  EXPECT_EQ(sizer.next_piece(1024, 1000, 1.0), 64);  // 100 fit: 16 x 4
  // 25 would fit if time were in proportion, but 64 rows are over the budget: half of
  // them first, to see whether the time shrinks.
  EXPECT_EQ(sizer.next_piece(1024, 8000, 1.0), 32);
}

TEST(PieceSizer, AShapeWhoseCostDriftsIsFollowed) {
  PieceSizer sizer(32);
  sizer.record(100, 2048, 1.0);  // 0.01 ms per row
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.3), 128);
  for (int i = 0; i < 20; ++i) sizer.record(100, 2048, 2.0);  // the device got slower
  EXPECT_NEAR(sizer.ms_per_row(2048), 0.02, 1e-4);
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.3), 64);  // 65 fit
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
      const int rows = sizer.next_piece(2048 - first, 8000, budget_ms);
      sizer.record(rows, 8000, cost(rows));
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
  PieceSizer sizer(32);
  const auto cost = [](int rows) { return 1.8 + 0.0016 * rows; };
  const LayersRun run = run_layers(sizer, cost, 0.5, 4);
  EXPECT_EQ(run.last_rows, 256);
  EXPECT_LE(run.longest_ms, PieceSizer::kUnattainableSlack * cost(32));
  EXPECT_EQ(sizer.next_piece(2048, 8000, 0.5), 256);
}

// The CPU: time in proportion to rows, and the smallest piece already over the budget.
// One larger piece shows it, and then the pieces stay at the smallest.
TEST(PieceSizer, TimeInProportionToRowsKeepsTheSmallestPiece) {
  PieceSizer sizer(32);
  const auto cost = [](int rows) { return 0.02 * rows; };
  const LayersRun run = run_layers(sizer, cost, 0.5, 4);
  EXPECT_EQ(run.last_rows, 32);
  EXPECT_DOUBLE_EQ(run.longest_ms, cost(64));  // the one look above
  EXPECT_EQ(sizer.next_piece(2048, 8000, 0.5), 32);
}

// The H200 at 8K context, where a piece of a size never run before pays its kernel loads
// (15 ms here) once. Timing those would rule out every size tried after the first and
// keep 32-row pieces at a 2 ms budget (measured at 3a3f312); warm-ups are not timed.
TEST(PieceSizer, TheFirstLaunchOfASizeDoesNotKeepThePiecesSmall) {
  PieceSizer sizer(32);
  std::set<int> launched;
  const auto cost = [&](int rows) {
    return launched.insert(rows).second ? 15.0 : 0.3 + 0.002 * rows;
  };
  const LayersRun run = run_layers(sizer, cost, 2.0, 4);
  EXPECT_EQ(run.last_rows, 512);  // 1.32 ms; 1024 rows would take 2.35
  EXPECT_EQ(sizer.next_piece(2048, 8000, 2.0), 512);
}

// Time that falls as rows grow is a stale time: the faster, larger size is believed.
TEST(PieceSizer, ASizeSlowerThanALargerOneIsIgnored) {
  PieceSizer sizer(32);
  sizer.record(32, 2048, 5.0);   // a one-off: the shape's first piece
  sizer.record(64, 2048, 9.9);   // warm-up of a new size: not timed
  sizer.record(64, 2048, 0.64);  // 0.01 ms per row
  EXPECT_EQ(sizer.next_piece(2048, 2048, 2.6), 256);
}

TEST(PieceSizer, NonsenseMeasurementsAreIgnored) {
  PieceSizer sizer(32);
  sizer.record(0, 2048, 1.0);
  sizer.record(10, 2048, -1.0);
  sizer.record(10, 2048, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(sizer.ms_per_row(2048), 0.0);
  EXPECT_THROW(PieceSizer(0), std::invalid_argument);
}

}  // namespace
}  // namespace baton
