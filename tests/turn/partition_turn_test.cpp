#include "baton/turn/partition_turn.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

// With no fixed share the engines on the device split it by their weights: a decoder of
// weight 3 beside a prefill of weight 1 gets 3/4 of the chip.
TEST(PartitionTurn, WithoutAFixedShareTheWeightsSplitTheChip) {
  TwoClients c;
  TurnOptions options;
  options.policy = TurnPolicy::partition;
  PartitionTurn turn(options);
  const TurnClientId prefill = turn.register_client("prefill", *c.prefill_stream);
  const TurnClientId decode = turn.register_client("decode", *c.decode_stream);
  turn.set_weight(decode, 3.0);
  TurnHold p(turn, prefill, BurstKind::prefill);
  EXPECT_EQ(turn.device_share(prefill), 1.0);  // alone
  std::latch inside(1);
  std::latch done(1);
  std::thread t([&] {
    TurnHold d(turn, decode, BurstKind::decode);
    inside.count_down();
    done.wait();
    EXPECT_DOUBLE_EQ(turn.device_share(decode), 0.75);
    d.release();
  });
  inside.wait();
  EXPECT_DOUBLE_EQ(turn.device_share(prefill), 0.25);
  EXPECT_DOUBLE_EQ(turn.stats().prefill_share, 0.25);
  done.count_down();
  t.join();
  EXPECT_EQ(turn.device_share(prefill), 1.0);
  p.release();
  EXPECT_THROW(turn.set_weight(decode, 0.001), std::invalid_argument);
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


// --prefill-share auto, with real threads: a decoder whose bursts take longer while a
// prefill engine holds the turn (a CPU stand-in for the bandwidth it loses) pulls the share
// down from 0.5; the prefill engine holds back briefly so the decoder is measured alone.
TEST(PartitionTurn, AutoShareFollowsTheDecodersSlowdown) {
  TwoClients c;
  TurnOptions options = share(0.5);
  options.prefill_share_auto = true;
  PartitionTurn turn(options);
  EXPECT_EQ(describe(options), "partition/auto");
  const TurnClientId prefill = turn.register_client("prefill", *c.prefill_stream);
  const TurnClientId decode = turn.register_client("decode", *c.decode_stream);
  std::atomic<bool> stop{false};
  std::atomic<int> prefill_bursts{0};
  std::thread prefiller([&] {
    while (!stop.load()) {
      TurnHold p(turn, prefill, BurstKind::prefill);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      p.release();
      prefill_bursts.fetch_add(1);
    }
  });
  // Alone a decode burst takes 2 ms; next to a prefill 2 ms x (1 + 2 x share): above the
  // 1.2x target until the share is down to the floor of 1/8 (1.25x).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (turn.stats().prefill_share > 0.125 && std::chrono::steady_clock::now() < deadline) {
    TurnHold d(turn, decode, BurstKind::decode);
    const double s = turn.device_share(decode) < 1.0 ? 1.0 - turn.device_share(decode) : 0.0;
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int>(2000 * (1 + 2 * s))));
    d.release();
  }
  stop.store(true);
  prefiller.join();
  EXPECT_DOUBLE_EQ(turn.stats().prefill_share, 0.125);
  EXPECT_GT(prefill_bursts.load(), 0);
}

}  // namespace
}  // namespace baton
