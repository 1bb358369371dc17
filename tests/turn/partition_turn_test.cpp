#include "baton/turn/partition_turn.h"

#include <gtest/gtest.h>

#include <latch>
#include <stdexcept>
#include <thread>

#include "baton/gpu/cpu/cpu_device.h"

namespace baton {
namespace {

struct TwoClients {
  TwoClients()
      : prefill_stream(device.create_stream("p")), decode_stream(device.create_stream("d")) {}
  cpu::CpuDevice device{CommitLimits{}};
  std::unique_ptr<Stream> prefill_stream;
  std::unique_ptr<Stream> decode_stream;
};

TurnOptions share(double s) {
  TurnOptions options;
  options.policy = TurnPolicy::partition;
  options.prefill_share = s;
  return options;
}

TEST(PartitionTurn, PrefillGetsItsShareOnlyWhileAnotherEngineRuns) {
  TwoClients c;
  PartitionTurn turn(share(0.4));
  const TurnClientId prefill = turn.register_client("prefill", *c.prefill_stream);
  const TurnClientId decode = turn.register_client("decode", *c.decode_stream);

  TurnHold p(turn, prefill, BurstKind::prefill);
  EXPECT_EQ(turn.device_share(prefill), 1.0);  // alone: the whole chip
  {
    // The decode engine runs on its own thread, side by side: nobody waits.
    std::latch inside(1);
    std::latch done(1);
    std::thread t([&] {
      TurnHold d(turn, decode, BurstKind::decode);
      inside.count_down();
      done.wait();
      EXPECT_DOUBLE_EQ(turn.device_share(decode), 0.6);  // the rest of the chip
      d.release();
    });
    inside.wait();
    EXPECT_EQ(turn.device_share(prefill), 0.4);
    done.count_down();
    t.join();
  }
  EXPECT_EQ(turn.device_share(prefill), 1.0);  // the decode engine left: all of it again
  p.release();
  EXPECT_EQ(turn.stats().clients.size(), 2u);
}

TEST(PartitionTurn, ReentrantHoldsCountOnce) {
  TwoClients c;
  PartitionTurn turn(share(0.5));
  const TurnClientId prefill = turn.register_client("prefill", *c.prefill_stream);
  const TurnClientId decode = turn.register_client("decode", *c.decode_stream);
  turn.acquire(decode, BurstKind::decode);
  turn.acquire(decode, BurstKind::decode);
  EXPECT_EQ(turn.device_share(decode), 1.0);  // no prefill running: all of it
  turn.acquire(prefill, BurstKind::prefill);
  EXPECT_EQ(turn.device_share(prefill), 0.5);
  EXPECT_EQ(turn.device_share(decode), 0.5);
  turn.release(decode);
  EXPECT_EQ(turn.device_share(prefill), 0.5);  // still held once
  turn.release_quietly(decode);
  EXPECT_EQ(turn.device_share(prefill), 1.0);
  turn.release(prefill);
}

TEST(PartitionTurn, RejectsAShareOutsideTheChip) {
  EXPECT_THROW(PartitionTurn(share(0.0)), std::invalid_argument);
  EXPECT_THROW(PartitionTurn(share(1.5)), std::invalid_argument);
}

}  // namespace
}  // namespace baton
