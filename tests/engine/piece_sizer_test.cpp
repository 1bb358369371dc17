// PieceSizer: one small piece for a shape never measured, then pieces sized to the budget
// from the measured time per row (power-of-two multiples of the alignment), per context
// bucket, and following a shape whose cost drifts.
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
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.0), 64);   // 100 rows fit: 32 x 2
  EXPECT_EQ(sizer.next_piece(2048, 2048, 2.6), 256);  // 260 fit: 32 x 8
  EXPECT_EQ(sizer.next_piece(90, 2048, 1.0), 90);     // the rest fits whole
  EXPECT_EQ(sizer.next_piece(130, 2048, 2.6), 130);
  EXPECT_EQ(sizer.next_piece(300, 2048, 2.6), 256);
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
  EXPECT_EQ(sizer.next_piece(1024, 1000, 1.0), 64);  // 100 fit: 16 x 4
  EXPECT_EQ(sizer.next_piece(1024, 8000, 1.0), 16);  // 25 fit: 16
}

TEST(PieceSizer, AShapeWhoseCostDriftsIsFollowed) {
  PieceSizer sizer(32);
  sizer.record(100, 2048, 1.0);  // 0.01 ms per row
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.3), 128);
  for (int i = 0; i < 20; ++i) sizer.record(100, 2048, 2.0);  // the device got slower
  EXPECT_NEAR(sizer.ms_per_row(2048), 0.02, 1e-4);
  EXPECT_EQ(sizer.next_piece(2048, 2048, 1.3), 64);  // 65 fit
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
