// The weighted fair share of the serialize turn, in one process (SerialTurn) and across
// attachments of a host segment (HostTurn), with real threads on CPU streams whose ops
// sleep: the measured device-time shares against the weights, no starvation, the bound
// on how long a waiter that is owed the turn waits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "baton/common/clock.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/fair_share.h"
#include "baton/turn/host_turn.h"
#include "baton/turn/serial_turn.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

TurnOptions fair_options() {
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  options.quantum = Quantum::op;
  options.decode_first = false;
  return options;
}

// `n` clients of a SerialTurn, each with its own CPU stream.
struct FairFixture {
  explicit FairFixture(std::size_t n, TurnOptions options = fair_options())
      : turn(device.default_stream(), options) {
    for (std::size_t i = 0; i < n; ++i) {
      streams.push_back(device.create_stream("s" + std::to_string(i)));
      ids.push_back(turn.register_client("c" + std::to_string(i), *streams.back()));
    }
  }
  cpu::CpuDevice device{CommitLimits{}};
  SerialTurn turn;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<TurnClientId> ids;
};

// Device work of `d`: the stream counts it as device time.
Op sleeping_op(std::chrono::microseconds d) {
  return Op{.run = [d] { std::this_thread::sleep_for(d); }};
}

// One layer of a burst as LlmEngine encodes it: waited for while the turn asks for pieces,
// launched ahead otherwise.
void encode_layer(GpuTurn& turn, TurnClientId id, Stream& stream, BurstKind kind,
                  std::chrono::microseconds layer) {
  stream.encode(sleeping_op(layer));
  if (turn.piece_budget_ms(id, kind)) {
    stream.synchronize();
  } else {
    stream.commit();
  }
}

// An engine that always wants the device: bursts of `layers` layers, a yield point between
// two layers, and `host_work` without the turn between two bursts (a step's sampling and
// delivery), until `stop`.
// `longest_away_ms`, when given, gets the longest time from a release to asking again.
void busy_engine(GpuTurn& turn, TurnClientId id, Stream& stream, BurstKind kind,
                 std::chrono::microseconds layer, int layers, const std::atomic<bool>& stop,
                 std::chrono::microseconds host_work = 0us, double* longest_away_ms = nullptr) {
  std::optional<TimePoint> released;
  while (!stop.load()) {
    if (released && longest_away_ms != nullptr) {
      *longest_away_ms = std::max(*longest_away_ms, millis_between(*released, Clock::now()));
    }
    TurnHold hold(turn, id, kind);
    for (int i = 0; i < layers; ++i) {
      encode_layer(turn, id, stream, kind, layer);
      if (i + 1 < layers) hold.yield_point(Boundary::layer);
    }
    hold.release();
    released = Clock::now();
    if (host_work > 0us) std::this_thread::sleep_for(host_work);
  }
}

// Each client's share of the device time used between two snapshots.
std::vector<double> shares_between(const TurnStats& before, const TurnStats& after) {
  std::vector<double> used;
  double total = 0.0;
  for (std::size_t i = 0; i < after.clients.size(); ++i) {
    used.push_back(after.clients[i].device_s - before.clients[i].device_s);
    total += used.back();
  }
  for (double& u : used) u /= total;
  return used;
}

// Runs one busy engine per client (`kinds[i]`, layers of `layer`) for `window` after a
// warm-up, and returns the shares of device time in the window.
std::vector<double> measured_shares(GpuTurn& turn, const std::vector<TurnClientId>& ids,
                                    const std::vector<std::unique_ptr<Stream>>& streams,
                                    const std::vector<BurstKind>& kinds,
                                    std::chrono::milliseconds window,
                                    std::vector<std::chrono::microseconds> host_work = {}) {
  host_work.resize(ids.size(), 0us);
  std::atomic<bool> stop{false};
  std::vector<std::thread> engines;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    engines.emplace_back(
        [&, i] { busy_engine(turn, ids[i], *streams[i], kinds[i], 400us, 8, stop, host_work[i]); });
  }
  std::this_thread::sleep_for(100ms);
  const TurnStats before = turn.stats();
  std::this_thread::sleep_for(window);
  const TurnStats after = turn.stats();
  stop = true;
  for (auto& e : engines) e.join();
  return shares_between(before, after);
}

TEST(FairShare, DeviceTimeFollowsTheWeightsThreeToOne) {
  FairFixture f(2);
  f.turn.set_weight(f.ids[0], 3.0);  // a decoder
  f.turn.set_weight(f.ids[1], 1.0);  // a prefill
  const std::vector<double> shares =
      measured_shares(f.turn, f.ids, f.streams, {BurstKind::decode, BurstKind::prefill}, 1200ms);
  EXPECT_NEAR(shares[0], 0.75, 0.05);
  EXPECT_NEAR(shares[1], 0.25, 0.05);
  const TurnStats stats = f.turn.stats();
  EXPECT_EQ(stats.clients[0].weight, 3.0);
  EXPECT_GT(stats.clients[1].yields, 0u);  // the share came in pieces, not whole bursts
}

TEST(FairShare, ThreeEqualWeightsGetAThirdEach) {
  FairFixture f(3);
  const std::vector<double> shares = measured_shares(
      f.turn, f.ids, f.streams, {BurstKind::decode, BurstKind::decode, BurstKind::prefill}, 1200ms);
  for (double share : shares) EXPECT_NEAR(share, 1.0 / 3, 0.05);
}

// Decoders leave the turn between two steps (sampling, delivery) and come back within the
// grace: each keeps its place, so the prefill that has the device meanwhile owes it back and
// the three shares stay a third each (1 ms away after each 3.2 ms burst here).
TEST(FairShare, DecodersThatLeaveBetweenStepsStillGetTheirShare) {
  FairFixture f(3);
  const std::vector<double> shares = measured_shares(
      f.turn, f.ids, f.streams, {BurstKind::decode, BurstKind::decode, BurstKind::prefill}, 1200ms,
      {1000us, 1000us, 0us});
  for (double share : shares) EXPECT_NEAR(share, 1.0 / 3, 0.05);
}

// A prefill whose pieces follow the turn's budget, bursts of `work` each, until `stop`.
void piece_engine(GpuTurn& turn, TurnClientId id, Stream& stream, std::chrono::microseconds work,
                  const std::atomic<bool>& stop) {
  while (!stop.load()) {
    TurnHold hold(turn, id, BurstKind::prefill);
    for (auto left = work; left > 0us;) {
      const std::optional<double> budget = turn.piece_budget_ms(id, BurstKind::prefill);
      const auto piece =
          budget ? std::min(left, std::chrono::microseconds(static_cast<long>(*budget * 1e3)))
                 : left;
      stream.encode(sleeping_op(piece));
      stream.synchronize();
      left -= piece;
      if (left > 0us) hold.yield_point(Boundary::layer);
    }
  }
}

// A decoder of weight 3 (steps of 8 ms, 200 us apart) beside a prefill whose pieces
// follow the budget, each on its own turn (one turn twice, or two attachments of a host
// segment): the decoder's share of device time, or nullopt when its thread was ever away
// for more than 2 ms (a loaded machine): away for longer than a cut piece (2.7 ms), it
// rightly leaves the prefill a second piece, and the share measures the scheduler.
std::optional<double> short_steps_share(GpuTurn& decoder_turn, TurnClientId decoder_id,
                                        Stream& decoder_stream, GpuTurn& prefill_turn,
                                        TurnClientId prefill_id, Stream& prefill_stream) {
  decoder_turn.set_weight(decoder_id, 3.0);
  const auto device_s = [&] {
    return std::pair{decoder_turn.stats().clients[decoder_id].device_s,
                     prefill_turn.stats().clients[prefill_id].device_s};
  };
  std::atomic<bool> stop{false};
  double away_ms = 0.0;
  std::thread decoder([&] {
    busy_engine(decoder_turn, decoder_id, decoder_stream, BurstKind::decode, 1000us, 8, stop, 200us,
                &away_ms);
  });
  std::thread prefill([&] { piece_engine(prefill_turn, prefill_id, prefill_stream, 40ms, stop); });
  std::this_thread::sleep_for(100ms);
  const auto [d0, p0] = device_s();
  std::this_thread::sleep_for(1200ms);
  const auto [d1, p1] = device_s();
  stop = true;
  decoder.join();
  prefill.join();
  if (away_ms > 2.0) return std::nullopt;
  return (d1 - d0) / (d1 - d0 + p1 - p0);
}

TurnOptions ten_ms_hold() {
  TurnOptions options = fair_options();
  options.max_hold_ms = 10.0;
  return options;
}

// Steps shorter than the hold (8 ms against 10 ms here) still get their weight: while the
// decoder is between two steps and owed the turn, the prefill's pieces are cut to its step
// x 1/3, so that it gets the turn back as often as 3:1 needs (a hold-long piece a step
// gives it about 0.44).
TEST(FairShare, StepsShorterThanTheHoldStillGetTheirWeight) {
  FairFixture f(2, ten_ms_hold());
  const std::optional<double> share =
      short_steps_share(f.turn, f.ids[0], *f.streams[0], f.turn, f.ids[1], *f.streams[1]);
  if (!share) GTEST_SKIP() << "the decoder's thread was away for more than 2 ms";
  EXPECT_NEAR(*share, 0.75, 0.05);
}

// An engine that wants less than its share gets all it wants: a light engine (weight 1,
// one 400 us layer every 8 ms, 5 % of the device) beside a busy one of weight 9 is never
// held behind more than a piece, and the busy one has the rest.
TEST(FairShare, AnEngineThatWantsLessThanItsShareGetsAllItWants) {
  FairFixture f(2);
  f.turn.set_weight(f.ids[0], 9.0);
  std::atomic<bool> stop{false};
  std::thread busy(
      [&] { busy_engine(f.turn, f.ids[0], *f.streams[0], BurstKind::prefill, 400us, 8, stop); });
  std::vector<double> waits_ms;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(8ms);
    const TimePoint asked = Clock::now();
    TurnHold hold(f.turn, f.ids[1], BurstKind::decode);
    waits_ms.push_back(millis_between(asked, Clock::now()));
    encode_layer(f.turn, f.ids[1], *f.streams[1], BurstKind::decode, 400us);
    hold.release();
  }
  stop = true;
  busy.join();
  std::sort(waits_ms.begin(), waits_ms.end());
  // A piece is 400 us of sleep; the median wait is about that, whatever the weights. Not
  // under ThreadSanitizer, which runs the test for its races: there every lock and stream
  // op is several times slower (a clean clone's TSan run beside a build measured a 5.2 ms
  // median), so a time says nothing about the turn.
#ifndef __SANITIZE_THREAD__
  EXPECT_LT(waits_ms[waits_ms.size() / 2], 5.0) << "median wait for the turn, ms";
#endif
  const TurnStats stats = f.turn.stats();
  EXPECT_GT(stats.clients[0].device_s, 3 * stats.clients[1].device_s);
}

// Alone, an engine never waits and never yields: the turn is work-conserving.
TEST(FairShare, AnEngineAloneHasTheWholeDevice) {
  FairFixture f(2);
  f.turn.set_weight(f.ids[1], 100.0);  // idle: its weight takes nothing from the other
  std::atomic<bool> stop{false};
  std::thread alone(
      [&] { busy_engine(f.turn, f.ids[0], *f.streams[0], BurstKind::prefill, 400us, 8, stop); });
  std::this_thread::sleep_for(300ms);
  stop = true;
  alone.join();
  const ClientTurnStats stats = f.turn.stats().clients[0];
  EXPECT_EQ(stats.yields, 0u);
  EXPECT_EQ(stats.wait_s, 0.0);
  EXPECT_GT(stats.device_s, 0.2);
}

// A waiter that asks while another engine holds the turn joins level with the holder, so
// it is owed the turn at the holder's next yield point: one piece, however long the
// holder has run and whatever the weights.
TEST(FairShare, AReturningEngineWaitsForAtMostOnePiece) {
  FairFixture f(2);
  f.turn.set_weight(f.ids[0], 100.0);
  f.turn.set_weight(f.ids[1], kMinTurnWeight);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    busy_engine(f.turn, f.ids[0], *f.streams[0], BurstKind::prefill, 2000us, 1000, stop);
  });
  std::this_thread::sleep_for(200ms);  // alone for a while: no credit for the other
  const TimePoint asked = Clock::now();
  f.turn.acquire(f.ids[1], BurstKind::decode);
  const double waited_ms = millis_between(asked, Clock::now());
  f.turn.release(f.ids[1]);
  stop = true;
  busy.join();
  // One 2 ms piece, plus scheduling on a loaded machine.
  EXPECT_LT(waited_ms, 40.0);
}

// The share decides at a yield point: a holder keeps the turn from a waiter that has had
// more than its share, and hands it to one that is owed it.
TEST(FairShare, AHolderHandsOverOnlyToAWaiterOwedTheTurn) {
  FairFixture f(2);
  std::vector<std::string> events;  // only touched while holding the turn
  f.turn.acquire(f.ids[0], BurstKind::decode);
  std::thread greedy([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    events.push_back("greedy runs 30 ms");
    f.streams[1]->encode(sleeping_op(30ms));
    f.streams[1]->synchronize();
    f.turn.yield_point(f.ids[1], Boundary::layer);  // the holder is owed: hands back
    events.push_back("greedy again");
    f.turn.release(f.ids[1]);
  });
  ASSERT_TRUE(eventually([&] { return f.turn.waiting() == 1; }));
  f.streams[0]->encode(sleeping_op(1ms));
  f.streams[0]->synchronize();
  f.turn.yield_point(f.ids[0], Boundary::layer);  // the greedy one joined level: it goes
  events.push_back("holder back, 5 ms");
  f.streams[0]->encode(sleeping_op(5ms));
  f.streams[0]->synchronize();
  f.turn.yield_point(f.ids[0], Boundary::layer);  // 6 ms used against 30: kept
  events.push_back("holder kept the turn");
  f.turn.release(f.ids[0]);
  greedy.join();
  EXPECT_EQ(events, (std::vector<std::string>{"greedy runs 30 ms", "holder back, 5 ms",
                                              "holder kept the turn", "greedy again"}));
}

TEST(FairShare, AWeightOutOfRangeIsRefused) {
  FairFixture f(1);
  EXPECT_THROW(f.turn.set_weight(f.ids[0], 0.0), std::invalid_argument);
  EXPECT_THROW(f.turn.set_weight(f.ids[0], 101.0), std::invalid_argument);
  EXPECT_THROW(f.turn.set_weight(f.ids[0], std::nan("")), std::invalid_argument);
  EXPECT_NO_THROW(f.turn.set_weight(f.ids[0], 0.5));
}

// Two attachments of one segment act as two processes: the host-wide turn shares by the
// weights as the one-process turn does.
TEST(FairShareHost, DeviceTimeFollowsTheWeightsAcrossAttachments) {
  const std::string name = "test-fair-" + std::to_string(now_ns());
  HostSegment::remove(name);
  TurnOptions options = fair_options();
  options.scope = TurnScope::host;
  options.host_name = name;
  {
    auto segment = std::make_shared<HostSegment>(name);
    cpu::CpuDevice device_a{CommitLimits{}};
    cpu::CpuDevice device_b{CommitLimits{}};
    HostTurn a(device_a.default_stream(), options, segment);
    HostTurn b(device_b.default_stream(), options, std::make_shared<HostSegment>(name));
    std::unique_ptr<Stream> stream_a = device_a.create_stream("a");
    std::unique_ptr<Stream> stream_b = device_b.create_stream("b");
    const TurnClientId id_a = a.register_client("a", *stream_a);
    const TurnClientId id_b = b.register_client("b", *stream_b);
    a.set_weight(id_a, 3.0);
    std::atomic<bool> stop{false};
    double away_ms = 0.0;
    std::thread ta([&] {
      busy_engine(a, id_a, *stream_a, BurstKind::decode, 400us, 8, stop, 1000us, &away_ms);
    });
    std::thread tb([&] { busy_engine(b, id_b, *stream_b, BurstKind::prefill, 400us, 8, stop); });
    std::this_thread::sleep_for(100ms);
    const double a0 = a.stats().clients[0].device_s;
    const double b0 = b.stats().clients[0].device_s;
    std::this_thread::sleep_for(1200ms);
    const double a1 = a.stats().clients[0].device_s - a0;
    const double b1 = b.stats().clients[0].device_s - b0;
    stop = true;
    ta.join();
    tb.join();
    // The share holds for an engine that is back within the grace; a machine that did not
    // run its thread for longer (seen once in a full ctest -j2) tests something else.
    if (away_ms * 1e6 > static_cast<double>(kRejoinGraceNs)) {
      GTEST_SKIP() << "the decoder's thread was away " << away_ms << " ms, past the grace";
    }
    EXPECT_NEAR(a1 / (a1 + b1), 0.75, 0.05);
  }
  HostSegment::remove(name);
}

// The same across two attachments of a host segment: the host-wide turn cuts the pieces
// by the slots' shares as the one-process turn does.
TEST(FairShareHost, StepsShorterThanTheHoldStillGetTheirWeight) {
  const std::string name = "test-fair-steps-" + std::to_string(now_ns());
  HostSegment::remove(name);
  TurnOptions options = ten_ms_hold();
  options.scope = TurnScope::host;
  options.host_name = name;
  {
    cpu::CpuDevice device_a{CommitLimits{}};
    cpu::CpuDevice device_b{CommitLimits{}};
    HostTurn a(device_a.default_stream(), options);
    HostTurn b(device_b.default_stream(), options);
    std::unique_ptr<Stream> stream_a = device_a.create_stream("a");
    std::unique_ptr<Stream> stream_b = device_b.create_stream("b");
    const TurnClientId id_a = a.register_client("a", *stream_a);
    const TurnClientId id_b = b.register_client("b", *stream_b);
    const std::optional<double> share = short_steps_share(a, id_a, *stream_a, b, id_b, *stream_b);
    if (!share) GTEST_SKIP() << "the decoder's thread was away for more than 2 ms";
    EXPECT_NEAR(*share, 0.75, 0.05);
  }
  HostSegment::remove(name);
}

}  // namespace
}  // namespace baton
