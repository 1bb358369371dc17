// choose_evictions: the least recently used models go first (never used before any used),
// only as many as the new model needs, and none when all of them would not make room.
#include "baton/server/models/eviction.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace baton {
namespace {

constexpr std::uint64_t kGibibyte = std::uint64_t{1} << 30;

TimePoint at(int seconds) { return TimePoint{} + std::chrono::seconds(seconds); }

TEST(Eviction, TheLeastRecentlyUsedGoFirstAndOnlyAsManyAsNeeded) {
  const std::vector<EvictionCandidate> ready = {{.memory = 2 * kGibibyte, .last_used = at(30)},
                                                {.memory = 2 * kGibibyte, .last_used = at(10)},
                                                {.memory = 2 * kGibibyte, .last_used = at(20)}};
  // 6 of 8 GiB used; a 5 GiB model needs 3 GiB more: the two oldest.
  const EvictionPlan plan = choose_evictions(ready, 5 * kGibibyte, 8 * kGibibyte, 6 * kGibibyte);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.evict, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(plan.evictable, 6 * kGibibyte);
}

TEST(Eviction, AModelNeverUsedGoesBeforeAnyUsedOne) {
  const std::vector<EvictionCandidate> ready = {{.memory = kGibibyte, .last_used = at(1)},
                                                {.memory = kGibibyte, .last_used = std::nullopt}};
  const EvictionPlan plan = choose_evictions(ready, kGibibyte, 2 * kGibibyte, 2 * kGibibyte);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.evict, (std::vector<std::size_t>{1}));
}

TEST(Eviction, NoneGoWhenAllOfThemWouldNotMakeRoom) {
  // 7 of 8 GiB used, 3 of them by models that cannot be evicted; a 6 GiB model.
  const std::vector<EvictionCandidate> ready = {{.memory = 2 * kGibibyte, .last_used = at(1)},
                                                {.memory = 2 * kGibibyte, .last_used = at(2)}};
  const EvictionPlan plan = choose_evictions(ready, 6 * kGibibyte, 8 * kGibibyte, 7 * kGibibyte);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.evictable, 4 * kGibibyte);
}

}  // namespace
}  // namespace baton
