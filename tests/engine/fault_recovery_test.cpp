// In-place recovery seen from an engine: a hang in the middle of its work fails only the
// request that was running, with a retryable error, and the engine goes on.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/engine_host.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::HangNth;

void requests_survive_a_hang(TurnPolicy policy) {
  HangNth hooks(7);
  WatchdogOptions watchdog;
  watchdog.deadline = 100ms;
  TurnOptions turn;
  turn.policy = policy;
  EngineHost host(std::make_unique<cpu::CpuDevice>(
                      CommitLimits{.max_ops = 2, .max_bytes = std::size_t{1} << 30}, &hooks),
                  turn, watchdog);
  Engine& engine = host.add_engine(
      "decode-1", std::make_unique<SyntheticWorkload>(SyntheticShape{.kind = BurstKind::decode,
                                                                     .layers = 4,
                                                                     .rows = 2,
                                                                     .k = 32,
                                                                     .n = 32,
                                                                     .ops_per_layer = 1}));
  std::vector<std::future<RequestResult>> futures;
  for (std::uint64_t id = 1; id <= 6; ++id)
    futures.push_back(engine.submit(Request{.id = id, .bursts = 2}));

  int completed = 0;
  int failed = 0;
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "a request was left waiting";
    try {
      EXPECT_EQ(f.get().burst_ms.size(), 2u);
      ++completed;
    } catch (const GpuError& e) {
      EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
      EXPECT_TRUE(e.retryable());
      ++failed;
    }
  }
  EXPECT_EQ(hooks.hangs.load(), 1);
  EXPECT_EQ(failed, 1);  // only the request whose burst hung
  EXPECT_EQ(completed, 5);
  // The engine serves new work on the recovered stream.
  EXPECT_EQ(engine.submit(Request{.id = 99, .bursts = 3}).get().burst_ms.size(), 3u);
  const auto events = host.faults().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, FaultKind::hang);
  EXPECT_EQ(events[0].engine, "decode-1");
  // The watchdog counts the recovery once it sees the hung buffer complete.
  EXPECT_TRUE(testing::eventually([&] { return host.faults().recovered() == 1; }));
}

TEST(FaultRecovery, RequestsSurviveAHangUnderConcurrent) {
  requests_survive_a_hang(TurnPolicy::concurrent);
}

TEST(FaultRecovery, RequestsSurviveAHangUnderSerializeAndTheTurnMovesOn) {
  requests_survive_a_hang(TurnPolicy::serialize);
}

}  // namespace
}  // namespace baton
