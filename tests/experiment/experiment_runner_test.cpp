// ExperimentRunner with real threads and fake hooks (TSan runs these): blocks of 20 ms in the
// schedule's order, each started and ended once in order; a clock that steps one second a
// call and exposure that grows 0.25 h a block make every count exact. Hangs on one arm only
// end it with that arm's rival kept; equal hangs run the plan out on end_arm; the destructor
// ends the block in progress at once; hangs count in the block their time falls in, also
// when reported from several threads at once. Waits are on conditions with deadlines.
#include "baton/experiment/experiment_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace baton::experiment_runner_test {
namespace {

using namespace std::chrono_literals;

constexpr double kBlockHours = 0.25;  // exposure a block: exact in binary, so sums are exact
constexpr auto kPatience = 20s;       // the longest a test waits for the runner

ExperimentPlan short_plan(std::uint64_t seed) {
  TurnOptions serialize;
  serialize.policy = TurnPolicy::serialize;
  return {.name = "test",
          .arms = {{.name = "concurrent", .turn = TurnOptions{}},
                   {.name = "serialize", .turn = serialize}},
          .block_s = 0.02,
          .planned_hours = 0.0,
          .reduction = 5.0,
          .alpha = 0.05,
          .cluster_window_s = 0.0,  // every hang of a block its own cluster
          .seed = seed,
          .end_arm = 0};
}

// What the hooks saw, in order, and the fake clocks. The hooks may call the runner once
// `runner` is set (they wait for it: the constructor's own calls never need it).
class Fixture {
 public:
  struct Event {
    bool started = false;  // else ended
    std::size_t block = 0;
    std::size_t arm = 0;
    double unix = 0.0;
    double exposure_hours = 0.0;
    std::int64_t hangs = 0;
  };

  // Called in block_started on the runner's thread (never for block 0); may record hangs.
  std::function<void(ExperimentRunner&, const BlockStart&)> on_start;

  ExperimentHooks hooks() {
    return {.now_unix = [this] { return clock_.fetch_add(1.0) + 1.0; },
            .exposure_seconds = [this] { return exposure_.fetch_add(kBlockHours * 3600.0); },
            .switch_to = [this](std::size_t arm) { return switched(arm); },
            .block_started = [this](const BlockStart& b) { started(b); },
            .block_ended =
                [this](const BlockEnd& b) {
                  push({.started = false,
                        .block = b.block,
                        .arm = b.arm,
                        .unix = b.end_unix,
                        .exposure_hours = b.exposure_hours,
                        .hangs = b.hangs});
                },
            .ended = [this](const ExperimentState& s) { finished(s); }};
  }

  void start(ExperimentPlan plan) {
    owned_ = std::make_unique<ExperimentRunner>(std::move(plan), hooks());
    runner_.store(owned_.get());
    runner_.notify_all();
  }
  ExperimentRunner& runner() { return *owned_; }
  void stop() { owned_.reset(); }

  // Waits until `done` holds over the events (under the lock); false after kPatience.
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds patience = kPatience) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, patience, done);
  }
  std::size_t ended_blocks() const {
    return static_cast<std::size_t>(
        std::count_if(events_.begin(), events_.end(), [](const Event& e) { return !e.started; }));
  }

  // Under the lock or once the runner is gone:
  std::vector<Event> events_;
  std::vector<std::size_t> switches_;
  std::vector<ExperimentState> ended_;

 private:
  double switched(std::size_t arm) {
    std::lock_guard lock(mu_);
    switches_.push_back(arm);
    changed_.notify_all();
    return 0.25 + static_cast<double>(switches_.size() % 3);  // 0.25, 1.25 or 2.25 ms
  }
  void started(const BlockStart& b) {
    push({.started = true, .block = b.block, .arm = b.arm, .unix = b.start_unix});
    if (b.block == 0 || !on_start) return;
    runner_.wait(nullptr);
    on_start(*runner_.load(), b);
  }
  void push(const Event& e) {
    std::lock_guard lock(mu_);
    events_.push_back(e);
    changed_.notify_all();
  }
  void finished(const ExperimentState& s) {
    std::lock_guard lock(mu_);
    ended_.push_back(s);
    changed_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable changed_;
  std::atomic<double> clock_{1.0e9};
  std::atomic<double> exposure_{0.0};
  std::atomic<ExperimentRunner*> runner_{nullptr};
  std::unique_ptr<ExperimentRunner> owned_;  // last: destroyed first
};

// Every block started, then ended, in order, on the schedule's arm, each ending where the
// next starts; `blocks` of them ended.
void expect_blocks_in_order(const std::vector<Fixture::Event>& events, const ExperimentPlan& plan,
                            std::size_t blocks) {
  const BlockSchedule schedule(
      {.arms = 2, .block_hours = plan.block_s / 3600.0, .seed = plan.seed});
  ASSERT_GE(events.size(), 2 * blocks);
  for (std::size_t k = 0; k < blocks; ++k) {
    const Fixture::Event& start = events[2 * k];
    const Fixture::Event& end = events[2 * k + 1];
    ASSERT_TRUE(start.started) << "event " << 2 * k;
    ASSERT_FALSE(end.started) << "event " << 2 * k + 1;
    EXPECT_EQ(start.block, k);
    EXPECT_EQ(end.block, k);
    EXPECT_EQ(start.arm, static_cast<std::size_t>(schedule.arm(static_cast<std::int64_t>(k))));
    EXPECT_EQ(end.arm, start.arm);
    EXPECT_LT(start.unix, end.unix);
    EXPECT_DOUBLE_EQ(end.exposure_hours, kBlockHours);
    if (2 * k + 2 < events.size()) {
      EXPECT_EQ(events[2 * k + 2].unix, end.unix) << "block " << k;
    }
  }
}

// The first seed from `from` whose block 0 runs `arm`.
std::uint64_t seed_starting_on(std::size_t arm, std::uint64_t from = 1) {
  for (std::uint64_t seed = from;; ++seed) {
    const BlockSchedule s({.arms = 2, .block_hours = 0.02 / 3600.0, .seed = seed});
    if (static_cast<std::size_t>(s.arm(0)) == arm) return seed;
  }
}

// Hangs on `hot` only (5 a block, a second apart): the other arm wins and the turn stays there.
void run_until_verdict(std::size_t hot) {
  const ExperimentPlan plan = short_plan(seed_starting_on(1 - hot));
  Fixture f;
  f.on_start = [&](ExperimentRunner& r, const BlockStart& b) {
    if (b.arm != hot) return;
    for (int i = 0; i < 5; ++i) r.record_hang(b.start_unix + 0.1 + 0.1 * i);
  };
  f.start(plan);
  ASSERT_TRUE(f.wait([&] { return !f.ended_.empty(); }));
  const std::size_t winner = 1 - hot;
  ASSERT_TRUE(f.wait([&] { return f.switches_.back() == winner; }));
  // No switch after the end: the turn stays on the winner for ten more blocks' time.
  const std::size_t switches = f.switches_.size();
  EXPECT_FALSE(f.wait([&] { return f.switches_.size() > switches; }, 200ms));
  const ExperimentState state = f.runner().state();
  f.stop();

  ASSERT_EQ(f.ended_.size(), 1u);
  const ExperimentState& said = f.ended_[0];
  EXPECT_EQ(said.ended_reason, "verdict");
  EXPECT_EQ(said.kept_arm, winner);
  EXPECT_EQ(said.decision, hot == 1 ? SequentialVerdict::Decision::a_better
                                    : SequentialVerdict::Decision::b_better);
  EXPECT_LE(said.p_value, plan.alpha);
  EXPECT_TRUE(state.ended);
  EXPECT_EQ(state.arm, winner);
  EXPECT_EQ(state.kept_arm, winner);
  EXPECT_EQ(state.arms[winner].hangs, 0);
  EXPECT_EQ(state.arms[hot].hangs, 5 * state.arms[hot].blocks);
  EXPECT_EQ(state.arms[hot].clusters, state.arms[hot].hangs);  // a second apart, window 0
  // The blocks: all ended before the verdict, none started after it.
  const std::size_t blocks = f.ended_blocks();
  ASSERT_EQ(f.events_.size(), 2 * blocks);
  expect_blocks_in_order(f.events_, plan, blocks);
  EXPECT_EQ(static_cast<std::int64_t>(blocks), state.arms[0].blocks + state.arms[1].blocks);
  for (const Fixture::Event& e : f.events_) {
    if (!e.started) {
      EXPECT_EQ(e.hangs, e.arm == hot ? 5 : 0) << "block " << e.block;
    }
  }
}

TEST(ExperimentRunner, HangsOnArmBOnlyKeepArmA) { run_until_verdict(1); }

TEST(ExperimentRunner, HangsOnArmAOnlyKeepArmB) { run_until_verdict(0); }

TEST(ExperimentRunner, SwitchesFollowTheBlocksAndAreMeasured) {
  const ExperimentPlan plan = short_plan(3);
  Fixture f;
  f.start(plan);
  ASSERT_TRUE(f.wait([&] { return f.ended_blocks() >= 8; }));
  const ExperimentState state = f.runner().state();
  f.stop();
  const std::size_t blocks = f.ended_blocks();
  expect_blocks_in_order(f.events_, plan, blocks);
  // One switch a block, to the block's arm (a switch to the running arm is the turn's no-op).
  ASSERT_GE(f.switches_.size(), blocks);
  for (std::size_t k = 0; k < blocks; ++k) EXPECT_EQ(f.switches_[k], f.events_[2 * k].arm);
  EXPECT_DOUBLE_EQ(state.longest_switch_ms, 2.25);
  EXPECT_TRUE(state.day_balanced);
  EXPECT_FALSE(state.ended);
  EXPECT_TRUE(f.ended_.empty());
}

TEST(ExperimentRunner, EqualHangsRunThePlanOutOnEndArm) {
  ExperimentPlan plan = short_plan(5);
  plan.planned_hours = 10 * kBlockHours;  // ten blocks
  plan.end_arm = 1;
  Fixture f;
  f.on_start = [&](ExperimentRunner& r, const BlockStart& b) {
    r.record_hang(b.start_unix + 0.2);
    r.record_hang(b.start_unix + 0.4);
  };
  f.start(plan);
  ASSERT_TRUE(f.wait([&] { return !f.ended_.empty(); }));
  ASSERT_TRUE(f.wait([&] { return f.switches_.back() == 1; }));
  const ExperimentState state = f.runner().state();
  f.stop();
  ASSERT_EQ(f.ended_.size(), 1u);
  EXPECT_EQ(f.ended_[0].ended_reason, "plan ran out");
  EXPECT_EQ(f.ended_[0].decision, SequentialVerdict::Decision::no_difference);
  EXPECT_EQ(f.ended_[0].kept_arm, 1u);
  EXPECT_EQ(state.arm, 1u);
  EXPECT_EQ(f.ended_blocks(), 10u);
  expect_blocks_in_order(f.events_, plan, 10);
  EXPECT_DOUBLE_EQ(state.arms[0].hours + state.arms[1].hours, 10 * kBlockHours);
  EXPECT_EQ(state.arms[0].hangs + state.arms[1].hangs, 2 * 9);  // block 0 has none
  ASSERT_TRUE(state.planned_hours_left.has_value());
  EXPECT_EQ(*state.planned_hours_left, 0.0);
  EXPECT_EQ(to_json(state).at("kept_arm"), "serialize");
  EXPECT_EQ(to_json(state).at("decision"), "no_difference");
}

TEST(ExperimentRunner, DestructorEndsTheBlockInProgressAtOnce) {
  ExperimentPlan plan = short_plan(1);
  plan.block_s = 3600.0;
  Fixture f;
  f.start(plan);
  const double start = f.runner().state().block_start_unix;
  f.runner().record_hang(start + 0.5);
  f.runner().record_hang(start + 0.7);
  EXPECT_EQ(f.runner().state().block_hangs, 2);
  const auto before = std::chrono::steady_clock::now();
  f.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);  // not the hour's end
  ASSERT_EQ(f.events_.size(), 2u);
  EXPECT_TRUE(f.events_[0].started);
  EXPECT_FALSE(f.events_[1].started);
  EXPECT_EQ(f.events_[1].block, 0u);
  EXPECT_EQ(f.events_[1].hangs, 2);
  EXPECT_TRUE(f.ended_.empty());  // stopped, not ended: no verdict to tell
}

// The clock steps one second a call: block k runs [t0 + k, t0 + k + 1).
TEST(ExperimentRunner, HangsCountInTheBlockTheirTimeFallsIn) {
  const ExperimentPlan plan = short_plan(9);
  Fixture f;
  f.on_start = [&](ExperimentRunner& r, const BlockStart& b) {
    if (b.block != 1) return;
    r.record_hang(b.start_unix - 0.5);  // in block 0, already ended: late
    r.record_hang(b.start_unix + 0.5);  // block 1
    r.record_hang(b.start_unix + 2.5);  // block 3
  };
  f.start(plan);
  ASSERT_TRUE(f.wait([&] { return f.ended_blocks() >= 5; }));
  const ExperimentState state = f.runner().state();
  f.stop();
  expect_blocks_in_order(f.events_, plan, 5);
  const std::int64_t expected[] = {0, 1, 0, 1, 0};
  for (std::size_t k = 0; k < 5; ++k) EXPECT_EQ(f.events_[2 * k + 1].hangs, expected[k]) << k;
  EXPECT_EQ(state.late_hangs, 1);
}

// Threads report hangs while blocks end and start: each hang is counted exactly once, in a
// block, as late, or after the end.
TEST(ExperimentRunner, RecordHangFromSeveralThreadsAtOnce) {
  const ExperimentPlan plan = short_plan(11);
  Fixture f;
  f.start(plan);
  constexpr int kThreads = 4;
  std::atomic<std::int64_t> recorded{0};
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        const std::size_t first = f.runner().state().block;
        for (int mine = 0;; ++mine) {  // until three boundaries have passed under this thread
          const ExperimentState now = f.runner().state();
          if ((mine >= 100 && now.block >= first + 3) || now.ended) return;
          f.runner().record_hang(now.block_start_unix + 0.5);
          recorded.fetch_add(1);
        }
      });
    }
  }
  const ExperimentState state = f.runner().state();
  f.stop();
  std::int64_t counted = state.late_hangs + state.hangs_after_end;
  for (const Fixture::Event& e : f.events_) counted += e.started ? 0 : e.hangs;
  EXPECT_GT(recorded.load(), 0);
  EXPECT_EQ(counted, recorded.load());
  expect_blocks_in_order(f.events_, plan, f.ended_blocks());
}

TEST(ExperimentRunner, BlocksThatDoNotDivideTheDayArePermutedPairs) {
  ExperimentPlan plan = short_plan(4);
  plan.block_s = 0.021;  // 86400 / 0.021 is no whole number
  Fixture f;
  f.start(plan);
  ASSERT_TRUE(f.wait([&] { return f.ended_blocks() >= 8; }));
  EXPECT_FALSE(f.runner().state().day_balanced);
  f.stop();
  for (std::size_t k = 0; k + 1 < 8; k += 2) {  // each aligned pair runs both arms
    EXPECT_NE(f.events_[2 * k].arm, f.events_[2 * k + 2].arm) << "pair at " << k;
  }
}

TEST(ExperimentRunner, AHookThatThrowsEndsTheExperimentAsFailed) {
  Fixture f;
  ExperimentHooks hooks = f.hooks();
  auto calls = std::make_shared<std::atomic<int>>(0);
  hooks.switch_to = [calls, inner = hooks.switch_to](std::size_t arm) {
    if (calls->fetch_add(1) == 3) throw std::runtime_error("the turn is gone");
    return inner(arm);
  };
  auto runner = std::make_unique<ExperimentRunner>(short_plan(2), hooks);
  ASSERT_TRUE(f.wait([&] { return !f.ended_.empty(); }));
  const ExperimentState state = runner->state();
  runner.reset();
  ASSERT_EQ(f.ended_.size(), 1u);
  EXPECT_EQ(f.ended_[0].ended_reason, "failed");
  EXPECT_EQ(f.ended_[0].error, "the turn is gone");
  EXPECT_TRUE(state.ended);
  EXPECT_EQ(to_json(state).at("error"), "the turn is gone");
  // Blocks 0 and 1 ended at boundaries; the switch into block 3 threw: block 2 ended at
  // destruction.
  EXPECT_EQ(f.ended_blocks(), 3u);
  expect_blocks_in_order(f.events_, short_plan(2), 3);
}

TEST(ExperimentRunner, RefusesAHangTimeThatIsNotFinite) {
  ExperimentPlan plan = short_plan(1);
  plan.block_s = 3600.0;
  Fixture f;
  f.start(plan);
  EXPECT_THROW(f.runner().record_hang(std::nan("")), std::invalid_argument);
  EXPECT_THROW(f.runner().record_hang(std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  EXPECT_EQ(f.runner().state().block_hangs, 0);
}

TEST(ExperimentRunner, RefusesABadPlanOrMissingHooks) {
  Fixture f;
  ExperimentPlan bad = short_plan(1);
  bad.arms.pop_back();
  EXPECT_THROW((ExperimentRunner{bad, f.hooks()}), std::invalid_argument);
  ExperimentHooks hooks = f.hooks();
  hooks.switch_to = nullptr;
  EXPECT_THROW((ExperimentRunner{short_plan(1), hooks}), std::invalid_argument);
  EXPECT_TRUE(f.events_.empty());
}

}  // namespace
}  // namespace baton::experiment_runner_test
