// The block schedule's balance, counted directly over the arms it returns: every aligned
// window of `arms` blocks holds each arm once, every block of the day runs each arm once
// over each cycle of `arms` days, the order is random (both orders of a pair appear about
// equally often) and fixed by the seed.
#include "baton/analysis/block_schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton::block_schedule_test {
namespace {

TEST(BlockSchedule, EveryWindowOfArmsBlocksHoldsEachArmOnce) {
  for (const int arms : {2, 3, 4, 6}) {
    const BlockSchedule schedule({.arms = arms, .block_hours = 1.0, .seed = 7});
    const std::vector<int> order = schedule.arms(0, arms * 24 * 10);
    for (std::size_t start = 0; start < order.size(); start += static_cast<std::size_t>(arms)) {
      std::set<int> seen(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(start) + arms);
      ASSERT_EQ(seen.size(), static_cast<std::size_t>(arms)) << "arms " << arms << " at " << start;
      EXPECT_GE(*seen.begin(), 0);
      EXPECT_LT(*seen.rbegin(), arms);
    }
  }
}

// For each block of the day, the arms it ran over days [cycle * arms, (cycle + 1) * arms).
void expect_day_balance(const BlockSchedule& schedule, int cycles) {
  const int arms = schedule.arm_count();
  const std::int64_t per_day = schedule.blocks_per_day();
  for (int cycle = 0; cycle < cycles; ++cycle) {
    for (std::int64_t slot = 0; slot < per_day; ++slot) {
      std::set<int> seen;
      for (int day = cycle * arms; day < (cycle + 1) * arms; ++day) {
        seen.insert(schedule.arm(day * per_day + slot));
      }
      ASSERT_EQ(seen.size(), static_cast<std::size_t>(arms))
          << "slot " << slot << " of cycle " << cycle;
    }
  }
}

TEST(BlockSchedule, EachHourOfTheDayRunsEachArmOncePerCycle) {
  expect_day_balance(BlockSchedule({.arms = 2, .block_hours = 1.0, .seed = 1}), 20);
  expect_day_balance(BlockSchedule({.arms = 3, .block_hours = 2.0, .seed = 2}), 20);
  expect_day_balance(BlockSchedule({.arms = 2, .block_hours = 0.5, .seed = 3}), 20);
  // 24 blocks a day do not split into rounds of 5: the day balance still holds.
  expect_day_balance(BlockSchedule({.arms = 5, .block_hours = 1.0, .seed = 4}), 20);
}

TEST(BlockSchedule, TheOrderIsRandomAndFixedBySeed) {
  const BlockSchedule a({.arms = 2, .block_hours = 1.0, .seed = 11});
  const BlockSchedule same({.arms = 2, .block_hours = 1.0, .seed = 11});
  const BlockSchedule other({.arms = 2, .block_hours = 1.0, .seed = 12});
  const std::vector<int> first = a.arms(0, 4800);
  EXPECT_EQ(first, same.arms(0, 4800));
  EXPECT_NE(first, other.arms(0, 4800));
  // 2400 pairs: A first is Binomial(2400, 1/2), sd 24.5: within 4 sd of 1200.
  int a_first = 0;
  for (std::size_t k = 0; k < first.size(); k += 2) a_first += first[k] == 0 ? 1 : 0;
  EXPECT_NEAR(a_first, 1200, 4 * 24.5);
  // Not the same order every day either: the first block of the day differs across days.
  std::set<int> day_openers;
  for (int day = 0; day < 20; ++day) day_openers.insert(first[static_cast<std::size_t>(day * 24)]);
  EXPECT_EQ(day_openers.size(), 2u);
}

TEST(BlockSchedule, ArmsIsArmOverARange) {
  const BlockSchedule s({.arms = 3, .block_hours = 4.0, .seed = 5});
  EXPECT_EQ(s.blocks_per_day(), 6);
  const std::vector<int> range = s.arms(10, 7);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(range[static_cast<std::size_t>(i)], s.arm(10 + i));
}

TEST(BlockSchedule, RejectsBadOptions) {
  EXPECT_THROW(BlockSchedule({.arms = 1, .block_hours = 1.0, .seed = 0}), std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 65, .block_hours = 1.0, .seed = 0}), std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 2, .block_hours = 0.0, .seed = 0}), std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 2, .block_hours = -1.0, .seed = 0}), std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 2, .block_hours = std::nan(""), .seed = 0}),
               std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 2, .block_hours = 5.0, .seed = 0}), std::invalid_argument);
  EXPECT_THROW(BlockSchedule({.arms = 2, .block_hours = 48.0, .seed = 0}), std::invalid_argument);
  try {
    BlockSchedule({.arms = 2, .block_hours = 7.0, .seed = 0});
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("block_hours"), std::string::npos);
  }
  const BlockSchedule ok({.arms = 2, .block_hours = 1.0, .seed = 0});
  EXPECT_THROW(ok.arm(-1), std::invalid_argument);
  EXPECT_THROW(ok.arms(0, -1), std::invalid_argument);
}

}  // namespace
}  // namespace baton::block_schedule_test
