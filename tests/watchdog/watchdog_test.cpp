#include "baton/watchdog/watchdog.h"

#include <gtest/gtest.h>

#include <thread>

#include "baton/gpu/cpu/cpu_device.h"
#include "baton/gpu/fault_injector.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

WatchdogOptions deadline(std::chrono::milliseconds d) {
  WatchdogOptions options;
  options.deadline = d;
  return options;
}

TEST(Watchdog, DetectsAStalledStreamBlamesItsOwnerAndRecoversInPlace) {
  FaultPlan plan;
  plan.hang_probability = 1.0;
  FaultInjector injector(plan);
  cpu::CpuDevice device(CommitLimits{}, &injector);
  auto stream = device.create_stream("decode-1");
  FaultLog log;
  Watchdog watchdog(deadline(100ms), log);
  device.add_observer(watchdog);
  watchdog.watch(*stream, "decode-1");
  watchdog.set_activity_probe([] {
    return std::vector<EngineActivity>{{.engine = "decode-1",
                                        .stream = "decode-1",
                                        .kind = BurstKind::decode,
                                        .state = EngineState::running},
                                       {.engine = "prefill-1",
                                        .stream = "prefill-1",
                                        .kind = BurstKind::prefill,
                                        .state = EngineState::waiting}};
  });
  watchdog.start();

  stream->encode(Op{.run = [] {}});
  EXPECT_THROW(stream->synchronize(), GpuError);  // blocks until the watchdog resets it
  ASSERT_TRUE(eventually([&] { return log.recovered() == 1; }));
  const auto events = log.events();
  ASSERT_EQ(events.size(), 1u);
  const FaultEvent& e = events[0];
  EXPECT_EQ(e.kind, FaultKind::hang);
  EXPECT_EQ(e.engine, "decode-1");
  EXPECT_EQ(e.stream, "decode-1");
  EXPECT_EQ(e.in_flight, 1u);
  ASSERT_EQ(e.engines.size(), 2u);
  EXPECT_EQ(e.engines[1].state, EngineState::waiting);
  ASSERT_TRUE(e.detect_latency_ms.has_value());
  // The no-progress clock starts at the commit, a little before the executor stalls.
  EXPECT_GE(*e.detect_latency_ms, 80.0);
  // Loose: this test also runs under TSan next to other tests; the soak tests check the
  // tight bound (deadline plus a small margin) in a release build, alone.
  EXPECT_LE(*e.detect_latency_ms, 100.0 + 900.0);
  EXPECT_FALSE(log.fatal().has_value());
}

TEST(Watchdog, ASlowButProgressingStreamIsNotHung) {
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  FaultLog log;
  Watchdog watchdog(deadline(60ms), log);
  watchdog.watch(*stream, "s");
  watchdog.start();
  // 300 ms of work in flight at once, but every buffer completes within 20 ms.
  for (int i = 0; i < 15; ++i) stream->encode(Op{.run = [] { std::this_thread::sleep_for(20ms); }});
  stream->synchronize();
  watchdog.stop();
  EXPECT_TRUE(log.events().empty());
}

TEST(Watchdog, DeviceErrorsBecomeEventsAndFatalOnesTripTheLatch) {
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("s");  // outlives the watchdog's thread
  FaultLog log;
  Watchdog watchdog(deadline(1000ms), log);
  device.add_observer(watchdog);
  watchdog.watch(*stream, "engine-s");
  watchdog.start();
  stream->encode(Op{.run = [] { throw GpuError(GpuErrorClass::timeout, "test", "slow"); }});
  EXPECT_THROW(stream->synchronize(), GpuError);
  EXPECT_FALSE(log.wait_fatal_for(10ms));
  stream->encode(
      Op{.run = [] { throw GpuError(GpuErrorClass::submissions_ignored, "test", "gone"); }});
  EXPECT_THROW(stream->synchronize(), GpuError);
  EXPECT_TRUE(log.wait_fatal_for(1s));
  const auto events = log.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, FaultKind::timeout);
  EXPECT_EQ(events[0].engine, "engine-s");
  EXPECT_EQ(events[1].kind, FaultKind::submissions_ignored);
  EXPECT_TRUE(events[1].fatal);
}

}  // namespace
}  // namespace baton
