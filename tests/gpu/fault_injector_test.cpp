#include "baton/gpu/fault_injector.h"

#include <gtest/gtest.h>

#include <thread>

#include "baton/common/clock.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

Op sleep_op(std::chrono::microseconds d) {
  return Op{.run = [d] { std::this_thread::sleep_for(d); }};
}

TEST(FaultInjector, TimeoutProbabilityOneFailsEveryBuffer) {
  FaultPlan plan;
  plan.timeout_probability = 1.0;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}, &injector);
  auto stream = device.create_stream("s");
  bool ran = false;
  stream->encode(Op{.run = [&ran] { ran = true; }});
  try {
    stream->synchronize();
    FAIL() << "no timeout";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::timeout);
    EXPECT_TRUE(e.retryable());
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(injector.injected().timeouts, 1u);
}

TEST(FaultInjector, HungBufferNeverCompletesUntilReset) {
  FaultPlan plan;
  plan.hang_probability = 1.0;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{}, &injector);
  auto stream = device.create_stream("s");
  stream->encode(Op{.run = [] {}});
  stream->commit();
  ASSERT_TRUE(eventually([&] { return stream->stats().stalled_since.has_value(); }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(stream->stats().in_flight, 1u);  // stuck, as on a real GPU
  EXPECT_GE(stream->stats().no_progress_s, 0.05);
  stream->reset(GpuError(GpuErrorClass::hang, "test", "recovered"));
  try {
    stream->synchronize();
    FAIL() << "the reset's error was not raised";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
  }
  EXPECT_EQ(injector.injected().hangs, 1u);
  EXPECT_EQ(stream->stats().resets, 1u);
}

// Two streams doing 1 ms ops side by side, or one after the other.
std::uint64_t hangs_injected(bool overlap) {
  FaultPlan plan;
  plan.hang_rate = 20.0;  // per second of overlap: expect ~8 in 0.4 s of overlap
  plan.seed = 42;
  FaultInjector injector(plan);
  {
    cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}, &injector);
    device.add_observer(injector);
    auto a = device.create_stream("a");
    auto b = device.create_stream("b");
    for (int i = 0; i < 400; ++i) a->encode(sleep_op(1ms));
    if (!overlap) {
      a->wait_idle();
      EXPECT_FALSE(a->stats().stalled_since.has_value());
    }
    for (int i = 0; i < 400; ++i) b->encode(sleep_op(1ms));
    // A hung stream stays hung: wait for both to stall or finish, then free them.
    EXPECT_TRUE(eventually([&] {
      auto done = [](const Stream& s) {
        return s.stats().in_flight == 0 || s.stats().stalled_since;
      };
      return done(*a) && done(*b);
    }));
    a->reset(GpuError(GpuErrorClass::hang, "test", "free"));
    b->reset(GpuError(GpuErrorClass::hang, "test", "free"));
    EXPECT_THROW(a->synchronize(), GpuError);
    EXPECT_THROW(b->synchronize(), GpuError);
  }
  return injector.injected().hangs;
}

TEST(FaultInjector, OverlapHangsArriveOnlyDuringOverlap) {
  EXPECT_GE(hangs_injected(true), 1u);
  EXPECT_EQ(hangs_injected(false), 0u);
}

// At any rate the clocks hold the lock for a few draws, not one draw per arrival (1e9
// arrivals a second once kept every stream waiting for seconds).
TEST(FaultInjector, AHugeHangRateNeverHoldsTheStreamsUp) {
  FaultPlan plan;
  plan.hang_rate = 1e9;
  plan.slowdown_rate = 1e9;
  FaultInjector injector(plan);
  const StreamId a{1}, b{2};
  injector.stream_busy(a, Clock::now());
  injector.stream_busy(b, Clock::now());
  std::this_thread::sleep_for(1s);  // a billion arrivals
  const TimePoint start = Clock::now();
  EXPECT_TRUE(injector.stall_now(a));
  EXPECT_TRUE(injector.stall_now(b));
  injector.stream_idle(a, Clock::now());
  injector.stream_idle(b, Clock::now());
  EXPECT_LT(seconds_between(start, Clock::now()), 0.5);
}

// A hang a device backend took but no gate of its work took goes back to the overlap, so
// another stream of it can take it; once the overlap is over it is counted as dropped.
TEST(FaultInjector, AHangNoOpBoundaryTookGoesBackToItsOverlap) {
  FaultPlan plan;
  plan.hang_rate = 5.0;  // an arrival every 200 ms: hardly one in the microseconds below
  FaultInjector injector(plan);
  EXPECT_TRUE(injector.hangs_at_op_boundaries());
  const StreamId a{1}, b{2};
  injector.stream_busy(a, Clock::now());
  injector.stream_busy(b, Clock::now());
  ASSERT_TRUE(eventually([&] { return injector.stall_now(a); }));
  while (injector.stall_now(b)) {
  }  // arrivals of the same tick
  injector.hang_not_landed(a);
  EXPECT_TRUE(injector.stall_now(b));
  injector.stream_idle(a, Clock::now());
  injector.hang_not_landed(b);  // the overlap is over: nothing left to land on
  injector.stream_idle(b, Clock::now());
  const InjectedCounts counts = injector.injected();
  EXPECT_GE(counts.hangs_arrived, 1u);
  EXPECT_GE(counts.hangs_dropped, 1u);
  EXPECT_EQ(counts.hangs, 0u);  // none was realized
}

// Every arrival is accounted for: landed, or dropped when its overlap ended.
TEST(FaultInjector, ArrivalsThatNeverLandAreCountedAsDropped) {
  FaultPlan plan;
  plan.hang_rate = 1e6;
  FaultInjector injector(plan);
  const StreamId a{1}, b{2};
  injector.stream_busy(a, Clock::now());
  injector.stream_busy(b, Clock::now());
  ASSERT_TRUE(eventually([&] { return injector.injected().hangs_arrived > 100; }));
  injector.stream_idle(a, Clock::now());
  injector.stream_idle(b, Clock::now());
  const InjectedCounts counts = injector.injected();
  EXPECT_EQ(counts.hangs_dropped, counts.hangs_arrived);
  EXPECT_FALSE(injector.stall_now(a));
}

TEST(FaultInjector, ADeviceFaultFailsOneBufferFatally) {
  FaultPlan plan;
  // Far enough off that the first buffer lands before it under ThreadSanitizer on a
  // loaded machine (20 ms did not, once).
  plan.device_fault_after_s = 0.4;
  const auto started = Clock::now();
  FaultInjector injector(plan);
  EXPECT_FALSE(injector.hangs_at_op_boundaries());
  cpu::CpuDevice device(CommitLimits{}, &injector);
  auto stream = device.create_stream("s");
  stream->encode(Op{.run = [] {}});
  stream->synchronize();  // before the time: nothing
  ASSERT_LT(seconds_between(started, Clock::now()), 0.4) << "the first buffer came too late";
  std::this_thread::sleep_until(started + 500ms);
  stream->encode(Op{.run = [] {}});
  try {
    stream->synchronize();
    FAIL() << "the device fault did not fail the buffer";
  } catch (const GpuError& e) {
    EXPECT_TRUE(e.fatal());
  }
  stream->encode(Op{.run = [] {}});
  stream->synchronize();  // once only (on CUDA the context is gone after it anyway)
  EXPECT_EQ(injector.injected().device_faults, 1u);
}

TEST(FaultInjector, FatalSwitchMakesEverySubmissionFail) {
  FaultPlan plan;
  plan.fatal_after_s = 0.02;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{}, &injector);
  auto stream = device.create_stream("s");
  std::this_thread::sleep_for(60ms);
  for (int i = 0; i < 3; ++i) {
    stream->encode(Op{.run = [] {}});
    try {
      stream->synchronize();
      FAIL() << "submission was not ignored";
    } catch (const GpuError& e) {
      EXPECT_TRUE(e.fatal());
      EXPECT_FALSE(e.retryable());
    }
  }
  EXPECT_EQ(injector.injected().ignored_submissions, 3u);
}

TEST(FaultInjector, SlowdownMakesAStreamSlower) {
  FaultPlan plan;
  plan.slowdown_rate = 1000.0;  // starts at once
  plan.slowdown_factor = 5.0;
  plan.slowdown_seconds = 10.0;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}, &injector);
  device.add_observer(injector);
  auto stream = device.create_stream("s");
  // Busy until an episode has picked it, however late the injector's thread runs.
  testing::Gate gate;
  stream->encode(gate.op());
  stream->commit();
  ASSERT_TRUE(eventually([&] { return injector.slowdown(stream->id(), Clock::now()) > 1.0; }));
  EXPECT_GT(injector.injected().slowdowns, 0u);
  const auto episodes = injector.slowdown_episodes();
  ASSERT_FALSE(episodes.empty());
  EXPECT_EQ(episodes.front().stream, stream->id());
  EXPECT_NEAR(seconds_between(episodes.front().start, episodes.front().until), 10.0, 1e-6);
  gate.open();
  stream->synchronize();
  const TimePoint start = Clock::now();
  stream->encode(sleep_op(4ms));
  stream->synchronize();
  EXPECT_GE(millis_between(start, Clock::now()), 15.0);  // 4 ms at 5x is 20 ms
}

// only_on(): one engine's streams take the per-buffer faults and the slowdowns; another
// stream's buffers run as if there were no injector.
TEST(FaultInjector, OnlyOnKeepsPerBufferFaultsAndSlowdownsToTheChosenStreams) {
  FaultPlan plan;
  plan.hang_probability = 1.0;
  plan.slowdown_rate = 1000.0;
  plan.slowdown_seconds = 10.0;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}, &injector);
  device.add_observer(injector);
  auto target = device.create_stream("target");
  auto other = device.create_stream("other");
  injector.only_on({target->id()});
  // Busy while the slowdown clock runs: episodes may only ever pick the target.
  testing::Gate gate;
  other->encode(gate.op());
  other->commit();
  target->encode(Op{.run = [] {}});
  target->commit();
  ASSERT_TRUE(eventually([&] { return target->stats().stalled_since.has_value(); }));
  ASSERT_TRUE(eventually([&] { return injector.injected().slowdowns >= 3; }));
  gate.open();
  int ran = 0;
  for (int i = 0; i < 20; ++i) other->encode(Op{.run = [&ran] { ++ran; }});
  other->synchronize();  // every buffer completes: no hang, no timeout
  EXPECT_EQ(ran, 20);
  EXPECT_FALSE(other->stats().stalled_since.has_value());
  EXPECT_EQ(injector.slowdown(other->id(), Clock::now()), 1.0);
  for (const SlowdownEpisode& e : injector.slowdown_episodes()) {
    EXPECT_EQ(e.stream, target->id());
  }
  EXPECT_EQ(injector.injected().hangs, 1u);  // the target's one buffer
  target->reset(GpuError(GpuErrorClass::hang, "test", "free"));
  EXPECT_THROW(target->synchronize(), GpuError);
}

}  // namespace
}  // namespace baton
