#include "baton/engine/gpu_burst.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/serial_turn.h"
#include "test_util.h"

namespace baton {
namespace gpu_burst_test {

struct LastRecord final : BurstObserver {
  void burst_done(const BurstRecord& burst) override { record = burst; }
  std::optional<BurstRecord> record;  // written and read on the test's thread
};

// A burst whose yield point hands the turn to another engine for 30 ms: its record says
// so, and its own time leaves the wait out.
TEST(GpuBurst, TheRecordCountsTheWaitsAtYieldPointsApart) {
  cpu::CpuDevice device{CommitLimits{}};
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  options.quantum = Quantum::layer;
  SerialTurn turn(device.default_stream(), options);
  const std::unique_ptr<Stream> mine_stream = device.create_stream("mine");
  const std::unique_ptr<Stream> other_stream = device.create_stream("other");
  const TurnClientId mine = turn.register_client("mine", *mine_stream);
  const TurnClientId other = turn.register_client("other", *other_stream);
  const std::string name = "mine";
  std::atomic<EngineState> state{EngineState::idle};
  LastRecord last;
  const std::vector<BurstObserver*> observers{&last};
  const BurstContext context{
      .engine = name, .turn = turn, .client = mine, .state = state, .observers = observers};

  constexpr auto kOtherHolds = std::chrono::milliseconds(30);
  std::jthread waiter;  // joined on every path, an ASSERT's early return too
  {
    GpuBurst burst(context, BurstKind::prefill, 7, 0);
    burst.yield_point(Boundary::layer);  // nobody waits
    waiter = std::jthread([&] {
      turn.acquire(other, BurstKind::decode);
      std::this_thread::sleep_for(kOtherHolds);
      turn.release(other);
    });
    ASSERT_TRUE(testing::eventually([&] { return turn.waiting() == 1; }));
    burst.yield_point(Boundary::layer);  // hands over for the other's hold
    burst.done();
  }
  waiter.join();
  ASSERT_TRUE(last.record.has_value());
  const BurstRecord& record = *last.record;
  EXPECT_TRUE(record.ok);
  EXPECT_GE(record.yielded, kOtherHolds);
  EXPECT_GE(seconds_between(record.granted, record.done),
            std::chrono::duration<double>(record.yielded).count());
}

}  // namespace gpu_burst_test
}  // namespace baton
