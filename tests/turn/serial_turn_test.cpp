#include "baton/turn/serial_turn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::eventually;
using testing::Gate;

// A serialize turn with `n` clients, each with its own CPU stream.
struct TurnFixture {
  explicit TurnFixture(std::size_t n, TurnOptions options = serialize_options())
      : turn(device.default_stream(), options) {
    for (std::size_t i = 0; i < n; ++i) {
      streams.push_back(device.create_stream("s" + std::to_string(i)));
      ids.push_back(turn.register_client("c" + std::to_string(i), *streams.back()));
    }
  }
  // First come, first served (no client has used device time), a whole burst per hold: each
  // test turns on what it tests.
  static TurnOptions serialize_options() {
    TurnOptions options;
    options.policy = TurnPolicy::serialize;
    options.quantum = Quantum::burst;
    options.decode_first = false;
    return options;
  }
  // A thread in which client `who` waits for a decode burst's turn, then lets it go;
  // returns once it waits in line (the only waiter).
  std::thread wait_in_line(std::size_t who) {
    std::thread waiter([this, who] {
      turn.acquire(ids[who], BurstKind::decode);
      turn.release(ids[who]);
    });
    await_waiters(1);
    return waiter;
  }
  // Blocks until `count` clients wait in line.
  void await_waiters(std::size_t count) {
    ASSERT_TRUE(eventually([&] { return turn.waiting() == count; }));
  }

  cpu::CpuDevice device{CommitLimits{}};
  SerialTurn turn;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<TurnClientId> ids;
};

TEST(SerialTurn, GrantsTheTurnInArrivalOrder) {
  constexpr std::size_t kWaiters = 6;
  TurnFixture f(kWaiters + 1);
  const TurnClientId holder = f.ids[kWaiters];
  f.turn.acquire(holder, BurstKind::decode);
  std::vector<std::size_t> order;  // only touched while holding the turn
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&f, &order, i] {
      f.turn.acquire(f.ids[i], i % 2 ? BurstKind::prefill : BurstKind::decode);
      order.push_back(i);
      f.turn.release(f.ids[i]);
    });
    f.await_waiters(i + 1);
  }
  f.turn.release(holder);
  for (auto& t : threads) t.join();
  ASSERT_EQ(order.size(), kWaiters);
  for (std::size_t i = 0; i < kWaiters; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(f.turn.stats().handovers, kWaiters);
}

TEST(SerialTurn, DecodeFirstLetsWaitingDecodeBurstsGoAhead) {
  TurnOptions options = TurnFixture::serialize_options();
  options.decode_first = true;
  TurnFixture f(5, options);
  const BurstKind kinds[] = {BurstKind::prefill, BurstKind::decode, BurstKind::embed,
                             BurstKind::decode};
  f.turn.acquire(f.ids[4], BurstKind::prefill);
  std::vector<std::size_t> order;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 4; ++i) {
    threads.emplace_back([&f, &order, &kinds, i] {
      f.turn.acquire(f.ids[i], kinds[i]);
      order.push_back(i);
      f.turn.release(f.ids[i]);
    });
    f.await_waiters(i + 1);
  }
  f.turn.release(f.ids[4]);
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 3, 0, 2}));
}

TEST(SerialTurn, IsReentrantOnTheHoldingThread) {
  TurnFixture f(2);
  std::atomic<bool> other_holds{false};
  f.turn.acquire(f.ids[0], BurstKind::decode);
  f.turn.acquire(f.ids[0], BurstKind::decode);  // must not deadlock
  std::thread other([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    other_holds = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.turn.release(f.ids[0]);  // depth 2 -> 1: still held
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(other_holds.load());
  f.turn.release(f.ids[0]);
  other.join();
  EXPECT_TRUE(other_holds.load());
  EXPECT_EQ(f.turn.stats().clients[0].acquisitions, 1u);  // the nested acquire is not counted
}

TEST(SerialTurn, DrainErrorReachesTheHolderAndTheTurnStillMovesOn) {
  TurnFixture f(2);
  std::atomic<bool> waiter_ran{false};
  f.turn.acquire(f.ids[0], BurstKind::decode);
  std::thread waiter([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    waiter_ran = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.streams[0]->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "stuck"); }});
  try {
    f.turn.release(f.ids[0]);  // drains the stream: the error surfaces here
    ADD_FAILURE() << "release did not raise the drain error";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
  }
  waiter.join();
  EXPECT_TRUE(waiter_ran.load());
  EXPECT_EQ(f.streams[0]->stats().in_flight, 0u);
}

TEST(SerialTurn, DefaultStreamErrorsReachTheHolder) {
  TurnFixture f(1);
  f.device.default_stream().encode(
      Op{.run = [] { throw GpuError(GpuErrorClass::timeout, "test", "default"); }});
  f.device.default_stream().commit();
  f.turn.acquire(f.ids[0], BurstKind::decode);
  EXPECT_THROW(f.turn.release(f.ids[0]), GpuError);
  f.turn.acquire(f.ids[0], BurstKind::decode);  // the turn was freed
  EXPECT_NO_THROW(f.turn.release(f.ids[0]));
}

TEST(SerialTurn, ReleaseQuietlyKeepsTheErrorOnTheStream) {
  TurnFixture f(1);
  f.turn.acquire(f.ids[0], BurstKind::decode);
  f.streams[0]->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "kept"); }});
  f.turn.release_quietly(f.ids[0]);
  EXPECT_THROW(f.streams[0]->synchronize(), GpuError);  // not swallowed
}

// The turn's options with a handover_spin: the next waiter is warned and spins through
// the holder's drain, and the holder spins for it.
TurnOptions with_handover_spin(std::chrono::microseconds spin) {
  TurnOptions options = TurnFixture::serialize_options();
  options.handover_spin = spin;
  return options;
}

TEST(SerialTurn, HolderDrainsBeforeTheNextHolderRuns) {
  // Sleeping through the drain, spinning through all of it, and spinning for part of it.
  for (const auto handover_spin : {0, 200'000, 1'000}) {
    SCOPED_TRACE(handover_spin);
    TurnFixture f(2, with_handover_spin(std::chrono::microseconds(handover_spin)));
    std::atomic<bool> slow_op_done{false};
    std::atomic<bool> saw_unfinished{false};
    f.turn.acquire(f.ids[0], BurstKind::prefill);
    std::thread next([&] {
      f.turn.acquire(f.ids[1], BurstKind::decode);
      if (!slow_op_done) saw_unfinished = true;
      f.turn.release(f.ids[1]);
    });
    f.await_waiters(1);
    f.streams[0]->encode(Op{.run = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      slow_op_done = true;
    }});
    f.turn.release(f.ids[0]);  // committed and drained here, before the hand-over
    next.join();
    EXPECT_FALSE(saw_unfinished.load());
    EXPECT_EQ(f.device.overlap().read().overlap_s, 0.0);
  }
}

// A warning goes to the waiter that would be next when the holder starts to drain; the
// holder it then hands to is chosen again after the drain. A warned waiter that is passed
// over, and whose spin ends, sleeps again and is still woken for its own turn.
TEST(SerialTurn, AWarnedWaiterThatIsPassedOverStillGetsItsTurn) {
  TurnOptions options = with_handover_spin(std::chrono::microseconds(500));
  options.decode_first = true;
  TurnFixture f(3, options);
  std::vector<std::size_t> order;  // guarded by the turn
  auto take_turn = [&](std::size_t who, BurstKind kind) {
    f.turn.acquire(f.ids[who], kind);
    order.push_back(who);
    f.turn.release(f.ids[who]);
  };
  Gate drained;
  std::atomic<bool> holding{false};
  std::atomic<bool> draining{false};
  std::thread holder([&] {
    f.turn.acquire(f.ids[0], BurstKind::decode);
    holding = true;
    f.await_waiters(1);  // the prefill
    // Runs once release() has warned the prefill (the warning comes before the commit).
    f.streams[0]->encode(Op{.run = [&, gated = drained.op()] {
      draining = true;
      gated.run();
    }});
    f.turn.release(f.ids[0]);  // warns the prefill, then drains until the gate opens
  });
  while (!holding) std::this_thread::yield();
  std::thread prefill([&] { take_turn(1, BurstKind::prefill); });
  while (!draining) std::this_thread::yield();
  // Arrives during the drain with the same virtual time: decode first puts it ahead.
  std::thread decode([&] { take_turn(2, BurstKind::decode); });
  f.await_waiters(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the prefill's spin ends
  drained.open();
  holder.join();
  prefill.join();
  decode.join();
  EXPECT_EQ(order, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(f.device.overlap().read().overlap_s, 0.0);
}

TEST(SerialTurn, LayerQuantumHandsOverAtAYieldPointAndQueuesAgain) {
  TurnOptions options = TurnFixture::serialize_options();
  options.quantum = Quantum::layer;
  TurnFixture f(2, options);
  std::vector<std::string> events;  // only touched while holding the turn
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  // Nobody waits: keeps the turn, and waited for nothing.
  EXPECT_EQ(f.turn.yield_point(f.ids[0], Boundary::layer), std::chrono::nanoseconds(0));
  events.push_back("prefill layer 1");
  constexpr auto kDecodeHolds = std::chrono::milliseconds(30);
  std::thread decode([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    events.push_back("decode step");
    std::this_thread::sleep_for(kDecodeHolds);
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  // Hands over, waits, gets it back: the wait is the decoder's hold.
  const auto waited = f.turn.yield_point(f.ids[0], Boundary::layer);
  events.push_back("prefill layer 2");
  f.turn.release(f.ids[0]);
  decode.join();
  EXPECT_EQ(events,
            (std::vector<std::string>{"prefill layer 1", "decode step", "prefill layer 2"}));
  EXPECT_EQ(f.turn.stats().clients[0].yields, 1u);
  EXPECT_GE(waited, kDecodeHolds);
}

TEST(SerialTurn, BurstQuantumAndDecodeBurstsDoNotYield) {
  TurnFixture burst(2);  // quantum burst
  std::atomic<bool> other_holds{false};
  burst.turn.acquire(burst.ids[0], BurstKind::prefill);
  std::thread other([&] {
    burst.turn.acquire(burst.ids[1], BurstKind::decode);
    other_holds = true;
    burst.turn.release(burst.ids[1]);
  });
  burst.await_waiters(1);
  burst.turn.yield_point(burst.ids[0], Boundary::layer);
  EXPECT_FALSE(other_holds.load());
  burst.turn.release(burst.ids[0]);
  other.join();

  TurnOptions layer = TurnFixture::serialize_options();
  layer.quantum = Quantum::layer;
  TurnFixture f(2, layer);
  other_holds = false;
  f.turn.acquire(f.ids[0], BurstKind::decode);  // a decode step is never split
  std::thread waiter([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    other_holds = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.turn.yield_point(f.ids[0], Boundary::layer);
  EXPECT_FALSE(other_holds.load());
  f.turn.release(f.ids[0]);
  waiter.join();
}

TEST(SerialTurn, OpQuantumAlsoHandsOverInsideALayer) {
  for (const Quantum quantum : {Quantum::layer, Quantum::op}) {
    TurnOptions options = TurnFixture::serialize_options();
    options.quantum = quantum;
    TurnFixture f(2, options);
    std::atomic<bool> decode_ran{false};
    f.turn.acquire(f.ids[0], BurstKind::prefill);
    std::thread decode([&] {
      f.turn.acquire(f.ids[1], BurstKind::decode);
      decode_ran = true;
      f.turn.release(f.ids[1]);
    });
    f.await_waiters(1);
    f.turn.yield_point(f.ids[0], Boundary::op);
    // Under `layer` an op boundary is no quantum; under `op` the decode ran meanwhile.
    EXPECT_EQ(decode_ran.load(), quantum == Quantum::op) << to_string(quantum);
    f.turn.release(f.ids[0]);
    decode.join();
  }
}

// The holder keeps a second piece queued behind the running one: its yield point waits for
// the running piece only, and drains the queued one only to hand the turn over.
TEST(SerialTurn, AQueuedOpBoundaryWaitsForThePieceAheadAndDrainsOnlyToHandOver) {
  TurnOptions options = TurnFixture::serialize_options();
  options.quantum = Quantum::op;
  TurnFixture f(2, options);
  std::atomic<bool> first_done{false};
  std::atomic<bool> second_done{false};
  std::atomic<bool> go_on{false};
  std::atomic<int> stage{0};
  const auto gated = [](std::atomic<bool>& gate) {
    return Op{.run =
                  [&gate] {
                    while (!gate.load()) std::this_thread::yield();
                  },
              .bytes = 0};
  };
  std::thread holder([&] {
    Stream& stream = *f.streams[0];
    f.turn.acquire(f.ids[0], BurstKind::prefill);
    stream.encode(gated(first_done));
    stream.commit();
    stream.encode(gated(second_done));
    stream.commit();
    f.turn.yield_point(f.ids[0], Boundary::queued_op);  // nobody waits: on at once
    stage = 1;
    while (!go_on.load()) std::this_thread::yield();
    f.turn.yield_point(f.ids[0], Boundary::queued_op);  // a waiter is owed the turn
    stage = 2;
    f.turn.release(f.ids[0]);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stage.load(), 0);  // the first piece still runs
  first_done = true;
  ASSERT_TRUE(eventually([&] { return stage.load() == 1; }));
  EXPECT_EQ(f.streams[0]->stats().in_flight, 1u);  // the queued piece was not waited for

  std::atomic<bool> other_ran{false};
  std::thread waiter([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    other_ran = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  go_on = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(other_ran.load());  // the hand-over waits for the queued piece
  second_done = true;
  ASSERT_TRUE(eventually([&] { return other_ran.load(); }));
  waiter.join();
  holder.join();
  EXPECT_EQ(stage.load(), 2);
}

TEST(SerialTurn, MutualExclusionUnderContention) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  // Waiters that sleep, and waiters warned to spin through each holder's drain of an op.
  for (const auto handover_spin : {0, 300}) {
    SCOPED_TRACE(handover_spin);
    TurnFixture f(kThreads, with_handover_spin(std::chrono::microseconds(handover_spin)));
    int inside = 0;  // plain ints: TSan flags any overlap of holders
    int total = 0;
    int ops_run = 0;
    std::atomic<int> violations{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        const std::size_t me = static_cast<std::size_t>(t);
        for (int r = 0; r < kRounds; ++r) {
          f.turn.acquire(f.ids[me], BurstKind::decode);
          if (inside++ != 0) ++violations;
          ++total;
          if (handover_spin != 0) f.streams[me]->encode(Op{.run = [&] { ++ops_run; }});
          --inside;
          f.turn.release(f.ids[me]);
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(violations.load(), 0);
    EXPECT_EQ(total, kThreads * kRounds);
    EXPECT_EQ(ops_run, handover_spin != 0 ? kThreads * kRounds : 0);
    std::uint64_t acquisitions = 0;
    for (const auto& c : f.turn.stats().clients) acquisitions += c.acquisitions;
    EXPECT_EQ(acquisitions, static_cast<std::uint64_t>(kThreads * kRounds));
  }
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

TEST(SerialTurnPieces, APrefillIsCutIntoPiecesOnlyWhileAnotherClientWantsTheTurn) {
  TurnOptions options = TurnFixture::serialize_options();
  options.quantum = Quantum::op;
  options.max_hold_ms = 2.5;
  TurnFixture f(2, options);
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), std::nullopt);  // alone: whole layers
  std::thread other = f.wait_in_line(1);
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), 2.5);
  f.turn.release(f.ids[0]);
  other.join();
  // The other engine is between its steps, not waiting: still pieces, it will be back.
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), 2.5);
  f.turn.release(f.ids[0]);
  // Left alone for longer than ContentionClock::kRecentNs: whole layers again.
  std::this_thread::sleep_for(std::chrono::nanoseconds(ContentionClock::kRecentNs) +
                              std::chrono::milliseconds(20));
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), std::nullopt);
  f.turn.release(f.ids[0]);
}

TEST(SerialTurnPieces, AClientLongInLineStillCountsAsWaiting) {
  TurnOptions options = TurnFixture::serialize_options();
  options.quantum = Quantum::op;
  TurnFixture f(2, options);
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  std::thread other = f.wait_in_line(1);
  // It asked longer ago than ContentionClock::kRecentNs, but it is still in line.
  std::this_thread::sleep_for(std::chrono::nanoseconds(ContentionClock::kRecentNs) +
                              std::chrono::milliseconds(20));
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), options.max_hold_ms);
  f.turn.release(f.ids[0]);
  other.join();
}

TEST(SerialTurnPieces, OnlyTheOpQuantumCutsLayers) {
  TurnOptions options = TurnFixture::serialize_options();
  options.quantum = Quantum::layer;
  TurnFixture f(2, options);
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  std::thread other = f.wait_in_line(1);
  EXPECT_EQ(f.turn.piece_budget_ms(f.ids[0], BurstKind::prefill), std::nullopt);
  f.turn.release(f.ids[0]);
  other.join();
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

TEST(TurnOptionsNames, ABudgetOtherThanTheDefaultIsInThePolicysName) {
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  EXPECT_EQ(describe(options), "serialize/op+decode-first");  // the defaults
  options.max_hold_ms = 1.0;
  EXPECT_EQ(describe(options), "serialize/op1ms+decode-first");
  options.quantum = Quantum::layer;  // the budget is the op quantum's only
  EXPECT_EQ(describe(options), "serialize/layer+decode-first");
}

// Runs at other weights are other runs in the ledger; equal weights name no weights.
TEST(TurnOptionsNames, WeightsOtherThanOneAreInThePolicysName) {
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  const std::vector<EngineWeight> equal = {{.engine = "chat", .weight = 1.0},
                                           {.engine = "long", .weight = 1.0}};
  const std::vector<EngineWeight> three = {{.engine = "chat", .weight = 3.0},
                                           {.engine = "long", .weight = 1.0}};
  EXPECT_EQ(describe(options, equal), "serialize/op+decode-first");
  EXPECT_EQ(describe(options, three), "serialize/op+decode-first+weights=chat:3,long:1");
  options.policy = TurnPolicy::partition;
  EXPECT_EQ(describe(options, three), "partition/weights+weights=chat:3,long:1");
  options.prefill_share = 0.3;  // a fixed share: the weights do not split the chip
  EXPECT_EQ(describe(options, three), "partition/0.3");
  options.policy = TurnPolicy::concurrent;
  EXPECT_EQ(describe(options, three), "concurrent");
}

// A hand-over spins on CUDA, sleeps on the CPU (whose device is the cores), and the
// environment sets it either way, 0 included.
TEST(TurnOptionsDefaults, AHandOverSpinsOnCudaAndTheEnvironmentDecides) {
  constexpr const char* kVar = "BATON_TURN_HANDOVER_SPIN_US";
  ::unsetenv(kVar);
  EXPECT_EQ(TurnOptions::with_env_defaults("cuda").handover_spin, kCudaHandoverSpin);
  EXPECT_EQ(TurnOptions::with_env_defaults("cpu").handover_spin.count(), 0);
  ::setenv(kVar, "0", 1);
  EXPECT_EQ(TurnOptions::with_env_defaults("cuda").handover_spin.count(), 0);
  ::setenv(kVar, "250", 1);
  EXPECT_EQ(TurnOptions::with_env_defaults("cpu").handover_spin.count(), 250);
  ::setenv(kVar, "soon", 1);
  EXPECT_THROW((void)TurnOptions::with_env_defaults("cuda"), std::invalid_argument);
  ::unsetenv(kVar);
}

}  // namespace
}  // namespace baton
