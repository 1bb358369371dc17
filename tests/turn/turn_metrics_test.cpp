// stats_since: a run's window of the turn's counters, without what came before it (the
// engines' warm-up bursts at load, which made the first CUDA engine of a repro process look
// 0.03 over its share on the H100).
#include <gtest/gtest.h>

#include "baton/turn/turn_metrics.h"

namespace baton {
namespace {

TEST(TurnStatsSince, CountsOnlyWhatCameAfterTheFirstSnapshot) {
  TurnMetrics metrics;
  const TurnClientId warm = metrics.add_client("warm");
  const TurnClientId other = metrics.add_client("other");
  metrics.record_acquire(warm, 1'000'000);
  metrics.record_hold(warm, 290'000'000);
  metrics.record_device(warm, 290'000'000);  // a warm-up burst before the run
  const TurnStats before = metrics.snapshot();

  metrics.record_acquire(warm, 2'000'000);
  metrics.record_handover(warm, 10'000);
  metrics.record_hold(warm, 3'000'000);
  metrics.record_device(warm, 3'000'000);
  metrics.record_yield(warm);
  metrics.record_acquire(other, 0);
  metrics.record_hold(other, 5'000'000);
  metrics.record_device(other, 4'000'000);
  metrics.set_weight(other, 3.0);
  const TurnStats window = stats_since(metrics.snapshot(), before);

  ASSERT_EQ(window.clients.size(), 2u);
  const ClientTurnStats& w = window.clients[warm];
  EXPECT_EQ(w.name, "warm");
  EXPECT_EQ(w.acquisitions, 1u);
  EXPECT_EQ(w.handovers_in, 1u);
  EXPECT_EQ(w.yields, 1u);
  EXPECT_NEAR(w.wait_s, 0.002, 1e-9);
  EXPECT_NEAR(w.hold_s, 0.003, 1e-9);
  EXPECT_NEAR(w.device_s, 0.003, 1e-9);
  const ClientTurnStats& o = window.clients[other];
  EXPECT_EQ(o.acquisitions, 1u);
  EXPECT_NEAR(o.device_s, 0.004, 1e-9);
  EXPECT_EQ(o.weight, 3.0);  // the later snapshot's
  EXPECT_EQ(window.handovers, 1u);
}

TEST(TurnStatsSince, AnEmptyFirstSnapshotChangesNothing) {
  TurnMetrics metrics;
  const TurnClientId a = metrics.add_client("a");
  metrics.record_acquire(a, 1'000);
  metrics.record_device(a, 7'000'000);
  const TurnStats now = metrics.snapshot();
  const TurnStats window = stats_since(now, TurnStats{});
  ASSERT_EQ(window.clients.size(), 1u);
  EXPECT_EQ(window.clients[0].acquisitions, now.clients[0].acquisitions);
  EXPECT_EQ(window.clients[0].device_s, now.clients[0].device_s);
}

}  // namespace
}  // namespace baton
