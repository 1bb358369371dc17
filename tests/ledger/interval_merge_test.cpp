#include "baton/ledger/interval_merge.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

IntervalRow burst(std::string engine, double start, double end, std::int64_t context = 100,
                  std::int64_t request = 1, std::string kind = "decode") {
  return {.run_id = 1,
          .engine = std::move(engine),
          .kind = std::move(kind),
          .start = start,
          .end = end,
          .context_tokens = context,
          .request_id = request};
}

TEST(IntervalMerge, ConsecutiveBurstsOfOneRequestBecomeOneInterval) {
  // Gaps of 0.2 ms between steps, below the 1 ms limit; contexts 100..102 share a bucket.
  const auto merged = merge_consecutive(
      {burst("d", 0.0, 0.010, 100), burst("d", 0.0102, 0.020, 101), burst("d", 0.0202, 0.030, 102)},
      0.001);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].start, 0.0);
  EXPECT_EQ(merged[0].end, 0.030);
  EXPECT_EQ(merged[0].bursts, 3);
  EXPECT_EQ(merged[0].context_tokens, 102);  // the largest
}

TEST(IntervalMerge, KeepsApartWhatTheAnalysisTellsApart) {
  const auto merged =
      merge_consecutive({burst("d", 0.0, 0.01), burst("d", 0.02, 0.03),  // 10 ms gap: idle time
                         burst("d", 0.03, 0.04, 100, 2),                 // another request
                         burst("d", 0.04, 0.05, 100, 2, "prefill"),      // another kind
                         burst("d", 0.05, 0.06, 1000, 2, "prefill"),     // another context bucket
                         burst("d", 0.06, 0.07, 600, 2, "prefill")},  // 600 and 1000: same bucket
                        0.001);
  ASSERT_EQ(merged.size(), 5u);
  EXPECT_EQ(merged[4].start, 0.05);
  EXPECT_EQ(merged[4].end, 0.07);
  EXPECT_EQ(merged[4].context_tokens, 1000);
  EXPECT_EQ(merged[4].bursts, 2);
}

TEST(IntervalMerge, InterleavedEnginesMergeSeparately) {
  const auto merged = merge_consecutive({burst("a", 0.0, 0.01), burst("b", 0.0, 0.02),
                                         burst("a", 0.01, 0.02), burst("b", 0.02, 0.04)},
                                        0.001);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].engine, "a");
  EXPECT_EQ(merged[0].end, 0.02);
  EXPECT_EQ(merged[1].engine, "b");
  EXPECT_EQ(merged[1].end, 0.04);
  EXPECT_EQ(merged[1].bursts, 2);
}

TEST(IntervalMerge, BurstsWithoutContextMergeOnlyWithEachOther) {
  IntervalRow none = burst("e", 0.0, 0.01);
  none.context_tokens.reset();
  IntervalRow none2 = burst("e", 0.01, 0.02);
  none2.context_tokens.reset();
  EXPECT_EQ(merge_consecutive({none, none2}, 0.001).size(), 1u);
  EXPECT_EQ(merge_consecutive({none, burst("e", 0.01, 0.02, 0)}, 0.001).size(), 2u);
}

}  // namespace
}  // namespace baton
