#include "baton/model/cuda/key_splits.h"

#include <gtest/gtest.h>

namespace baton::cuda {
namespace {

// The H100 at head_dim 128: 132 multiprocessors, three flash blocks each.
constexpr int kH100Slots = 396;

TEST(KeySplits, OneHeadOfA2048RowPieceFillsAWaveInThreeRanges) {
  // 2048 rows x 4 query heads a KV head / 64 per tile = 128 blocks.
  EXPECT_EQ(key_splits(128, 32, kH100Slots), 3);  // 384 blocks: 0.97 of a wave
  EXPECT_EQ(key_splits(256, 32, kH100Slots), 3);  // two heads: 768 blocks, 1.94 waves
}

TEST(KeySplits, AWaveOrMoreIsNotSplit) {
  EXPECT_EQ(key_splits(396, 32, kH100Slots), 1);
  EXPECT_EQ(key_splits(1024, 32, kH100Slots), 1);  // a whole 2048-row chunk of 8 heads
}

TEST(KeySplits, FewBlocksSplitIntoAsManyRangesAsTwoWavesAndTheKeysAllow) {
  // A decode-sized chunk: 8 blocks; the keys allow 32 ranges, and 256 blocks take one wave.
  EXPECT_EQ(key_splits(8, 32, kH100Slots), 32);
  EXPECT_EQ(key_splits(8, 5, kH100Slots), 5);  // a short context: few key tiles
  EXPECT_EQ(key_splits(8, 1, kH100Slots), 1);
}

TEST(KeySplits, EveryChoiceStaysWithinTheScratchOfTwoWaves) {
  for (int blocks = 1; blocks < 2 * kH100Slots; ++blocks) {
    const int s = key_splits(blocks, 32, kH100Slots);
    ASSERT_GE(s, 1);
    ASSERT_TRUE(s == 1 || blocks * s <= key_split_blocks(kH100Slots)) << blocks;
    // Never slower than not splitting: waves per range of work at most one wave whole.
    const int waves = (blocks * s + kH100Slots - 1) / kH100Slots;
    const int whole_waves = (blocks + kH100Slots - 1) / kH100Slots;
    ASSERT_LE(static_cast<double>(waves) / s, whole_waves) << blocks;
  }
}

TEST(KeySplits, NoSlotsOrNoBlocksIsOneRange) {
  EXPECT_EQ(key_splits(0, 32, kH100Slots), 1);
  EXPECT_EQ(key_splits(10, 32, 0), 1);
}

// The 8B shape's 8 KV heads on an H100's 132 multiprocessors: 264 blocks wanted.
TEST(PagedKeySplits, FewRowsSplitUntilTheChipIsFullOrTheRangesShort) {
  EXPECT_EQ(paged_key_splits(1, 8, 256, 132, 64), 16);    // 16 ranges of 16 keys
  EXPECT_EQ(paged_key_splits(1, 8, 1024, 132, 64), 33);   // 8 x 33 = 264 blocks
  EXPECT_EQ(paged_key_splits(1, 8, 32768, 132, 64), 33);
  EXPECT_EQ(paged_key_splits(1, 8, 32768, 132, 16), 16);  // at most max_splits
  EXPECT_EQ(paged_key_splits(8, 8, 32768, 132, 64), 4);   // 64 blocks x 4 = 256
  EXPECT_EQ(paged_key_splits(32, 8, 8192, 132, 64), 1);   // 256 blocks already
  EXPECT_EQ(paged_key_splits(64, 8, 32768, 132, 64), 1);
}

TEST(PagedKeySplits, RowsShorterThanTheThresholdStayWhole) {
  EXPECT_EQ(paged_key_splits(1, 8, 10, 132, 64), 1);
  EXPECT_EQ(paged_key_splits(1, 8, 128, 132, 64), 1);
  EXPECT_EQ(paged_key_splits(1, 8, kPagedSplitFromKeys - 1, 132, 64), 1);
  EXPECT_GT(paged_key_splits(1, 8, kPagedSplitFromKeys, 132, 64), 1);
}

TEST(PagedKeySplits, NoRowsIsOneRange) { EXPECT_EQ(paged_key_splits(0, 8, 0, 132, 64), 1); }

}  // namespace
}  // namespace baton::cuda
