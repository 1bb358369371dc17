// SwitchableTurn with real threads (TSan runs these): a switch waits for the bursts in
// flight and holds new ones at its gate, re-entrant acquires pass the gate, the serialize
// arm keeps one holder at a time while switches come and go under load, and the counters
// add up over the arms.
#include "baton/turn/switchable_turn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/make_turn.h"
#include "test_util.h"

namespace baton::switchable_turn_test {
namespace {

using testing::eventually;

constexpr std::size_t kConcurrent = 0;
constexpr std::size_t kSerialize = 1;

struct Fixture {
  explicit Fixture(std::size_t clients) {
    TurnOptions serialize;
    serialize.policy = TurnPolicy::serialize;
    std::vector<SwitchableTurn::Arm> arms;
    arms.push_back(
        {.name = "concurrent", .turn = make_turn(TurnOptions{}, device.default_stream())});
    arms.push_back({.name = "serialize", .turn = make_turn(serialize, device.default_stream())});
    turn = std::make_unique<SwitchableTurn>(std::move(arms), kConcurrent);
    for (std::size_t i = 0; i < clients; ++i) {
      streams.push_back(device.create_stream("s" + std::to_string(i)));
      ids.push_back(turn->register_client("c" + std::to_string(i), *streams.back()));
    }
  }
  cpu::CpuDevice device{CommitLimits{}};
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<TurnClientId> ids;
  std::unique_ptr<SwitchableTurn> turn;
};

TEST(SwitchableTurn, ASwitchWaitsForTheBurstInFlightAndHoldsNewOnesAtItsGate) {
  Fixture f(2);
  f.turn->acquire(f.ids[0], BurstKind::prefill);
  auto switched = std::async(std::launch::async, [&] { return f.turn->switch_to(kSerialize); });
  ASSERT_TRUE(eventually([&] { return f.turn->gate_closed(); }));
  std::atomic<bool> second_in{false};
  std::thread second([&] {
    // Starts once the gate is closed: held there until the switch is over.
    f.turn->acquire(f.ids[1], BurstKind::decode);
    second_in = true;
    EXPECT_EQ(f.turn->current(), kSerialize);
    f.turn->release(f.ids[1]);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(switched.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(f.turn->current(), kConcurrent);
  // The holder's re-entrant acquire is part of its burst: it passes the closed gate.
  f.turn->acquire(f.ids[0], BurstKind::prefill);
  f.turn->release(f.ids[0]);
  f.turn->yield_point(f.ids[0], Boundary::layer);
  EXPECT_FALSE(second_in.load());
  f.turn->release(f.ids[0]);
  const SwitchableTurn::Switch done = switched.get();
  second.join();
  EXPECT_TRUE(second_in.load());
  EXPECT_EQ(done.from, kConcurrent);
  EXPECT_EQ(done.to, kSerialize);
  EXPECT_GE(done.gate_closed_ms, 40.0);  // the burst it waited for ran 50 ms more
  EXPECT_FALSE(f.turn->gate_closed());
  EXPECT_EQ(f.turn->policy_name(), "serialize");
  EXPECT_EQ(f.turn->switch_to(kSerialize).gate_closed_ms, 0.0);  // already there
  EXPECT_THROW(f.turn->switch_to(2), std::out_of_range);
}

TEST(SwitchableTurn, SerializeKeepsOneHolderWhileSwitchesComeAndGoUnderLoad) {
  constexpr std::size_t kClients = 4;
  constexpr int kSwitches = 60;
  Fixture f(kClients);
  std::atomic<int> serial_holders{0};
  std::atomic<int> overlaps{0};
  std::atomic<bool> stop{false};
  // At least what the arms count: every outer acquire (and re-entrant ones under concurrent,
  // which keeps no depth); serialize counts a yield's re-acquire too.
  std::atomic<std::uint64_t> counted{0};
  std::vector<std::thread> clients;
  for (std::size_t c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(static_cast<unsigned>(c));
      while (!stop) {
        TurnHold hold(*f.turn, f.ids[c], c % 2 ? BurstKind::decode : BurstKind::prefill);
        const bool serial = f.turn->current() == kSerialize;  // fixed while in flight
        const auto holding = [&] {
          if (serial && serial_holders.fetch_add(1) != 0) ++overlaps;
        };
        const auto letting_go = [&] {
          if (serial) serial_holders.fetch_sub(1);
        };
        holding();
        counted += 1;
        if (rng() % 3 == 0) {  // re-entrant, as a nested burst is
          if (!serial) counted += 1;
          f.turn->acquire(f.ids[c], BurstKind::decode);
          f.turn->release(f.ids[c]);
        }
        letting_go();  // a yield point may hand the turn to a waiter and wait in line
        hold.yield_point(Boundary::layer);
        holding();
        letting_go();
        hold.release();
      }
    });
  }
  double longest_gate_ms = 0.0;
  for (int s = 0; s < kSwitches; ++s) {
    const auto done = f.turn->switch_to(s % 2 ? kConcurrent : kSerialize);
    longest_gate_ms = std::max(longest_gate_ms, done.gate_closed_ms);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  stop = true;
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GT(counted.load(), std::uint64_t{kSwitches});
  EXPECT_LT(longest_gate_ms, 5000.0);  // bursts of microseconds: no switch waits on a stuck one
  std::uint64_t acquisitions = 0;
  for (const ClientTurnStats& c : f.turn->stats().clients) acquisitions += c.acquisitions;
  EXPECT_GE(acquisitions, counted.load());  // summed over both arms
}

TEST(SwitchableTurn, WeightsReachEveryArmAndBadArmsAreRefused) {
  Fixture f(2);
  f.turn->set_weight(f.ids[1], 3.0);
  f.turn->switch_to(kSerialize);
  EXPECT_EQ(f.turn->stats().clients[1].weight, 3.0);
  f.turn->switch_to(kConcurrent);
  EXPECT_EQ(f.turn->stats().clients[1].weight, 3.0);
  EXPECT_THROW(SwitchableTurn({}, 0), std::invalid_argument);
  std::vector<SwitchableTurn::Arm> one;
  one.push_back(
      {.name = "concurrent", .turn = make_turn(TurnOptions{}, f.device.default_stream())});
  EXPECT_THROW(SwitchableTurn(std::move(one), 1), std::invalid_argument);
}

}  // namespace
}  // namespace baton::switchable_turn_test
