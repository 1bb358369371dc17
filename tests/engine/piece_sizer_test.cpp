// PieceSizer: one small piece for a shape never measured, then pieces sized to the budget
// from the measured time per row, balanced, aligned, and following a shape whose cost drifts.
#include "baton/engine/piece_sizer.h"

#include <gtest/gtest.h>

#include <limits>
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
  // 1 ms holds 100 rows, 96 aligned; 2048 rows in 22 balanced pieces of 94 -> 96 aligned.
  const int piece = sizer.next_piece(2048, 2048, 1.0);
  EXPECT_EQ(piece % 32, 0);
  EXPECT_LE(piece * 0.01, 1.0);
  EXPECT_EQ(piece, 96);
  // No sliver is left at the end: 200 rows need three pieces, balanced at 67, aligned to 96
  // (then 104 rows are left: two pieces of 52, aligned to 64).
  EXPECT_EQ(sizer.next_piece(200, 2048, 1.0), 96);
  EXPECT_EQ(sizer.next_piece(104, 2048, 1.0), 64);
  EXPECT_EQ(sizer.next_piece(90, 2048, 1.0), 90);  // fits whole
  // A budget below one aligned piece still gives one aligned piece.
  EXPECT_EQ(sizer.next_piece(2048, 2048, 0.05), 32);
}

TEST(PieceSizer, EachContextBucketIsMeasuredApart) {
  PieceSizer sizer(16);
  sizer.record(64, 1000, 0.64);  // bucket of 512-1023
  sizer.record(64, 5000, 2.56);  // bucket of 4096-8191: attention over more keys
  EXPECT_DOUBLE_EQ(sizer.ms_per_row(600), 0.01);
  EXPECT_DOUBLE_EQ(sizer.ms_per_row(8000), 0.04);
  EXPECT_EQ(sizer.ms_per_row(3000), 0.0);
  EXPECT_EQ(sizer.next_piece(1024, 1000, 1.0), 96);  // 100 fit; 11 pieces of 94 -> 96
  EXPECT_EQ(sizer.next_piece(1024, 8000, 1.0), 16);  // 25 fit -> 16
}

TEST(PieceSizer, AShapeWhoseCostDriftsIsFollowed) {
  PieceSizer sizer(32);
  sizer.record(100, 2048, 1.0);  // 0.01 ms per row
  for (int i = 0; i < 20; ++i) sizer.record(100, 2048, 2.0);  // the device got slower
  EXPECT_NEAR(sizer.ms_per_row(2048), 0.02, 1e-4);
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.0), 32);  // 50 fit -> 32
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
