#include "baton/turn/concurrent_turn.h"

#include <gtest/gtest.h>

#include <latch>
#include <thread>

#include "baton/gpu/cpu/cpu_device.h"

namespace baton {
namespace {

TEST(ConcurrentTurn, HoldersNeverWaitForEachOther) {
  cpu::CpuDevice device(CommitLimits{});
  auto a = device.create_stream("a");
  auto b = device.create_stream("b");
  ConcurrentTurn turn;
  const TurnClientId ia = turn.register_client("a", *a);
  const TurnClientId ib = turn.register_client("b", *b);
  std::latch both_inside(2);
  auto hold_both = [&](TurnClientId id) {
    TurnHold hold(turn, id, BurstKind::decode);
    both_inside.arrive_and_wait();  // deadlocks if one holder excluded the other
    hold.release();
  };
  std::thread ta(hold_both, ia);
  std::thread tb(hold_both, ib);
  ta.join();
  tb.join();
  const TurnStats stats = turn.stats();
  EXPECT_EQ(stats.clients[0].acquisitions, 1u);
  EXPECT_EQ(stats.clients[1].acquisitions, 1u);
  EXPECT_EQ(stats.handovers, 0u);
}

TEST(ConcurrentTurn, ReleaseDoesNotDrain) {
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("s");
  ConcurrentTurn turn;
  const TurnClientId id = turn.register_client("s", *stream);
  turn.acquire(id, BurstKind::prefill);
  stream->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "x"); }});
  stream->commit();
  EXPECT_NO_THROW(turn.release(id));              // nothing drained, nothing raised
  EXPECT_THROW(stream->synchronize(), GpuError);  // the error waits for the owner
}

}  // namespace
}  // namespace baton
