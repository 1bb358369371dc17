// End-to-end fault detection through `baton repro`'s engine: hangs injected per second of
// overlap are all detected under `concurrent`, and never injected under `serialize`
// (zero overlap); with nothing injected, nothing is detected. Fixed seeds.
#include <gtest/gtest.h>

#include "baton/repro/repro_run.h"

namespace baton {
namespace {

// Small shapes: decode bursts of a few ms, prefill bursts of a few tens of ms.
ReproOptions small_engines(TurnPolicy policy, double seconds) {
  ReproOptions options;
  options.turn.policy = policy;
  options.turn.quantum = Quantum::layer;
  options.duration_s = seconds;
  options.engines = {{"decode-1", {BurstKind::decode, 8, 8, 512, 256, 2}},
                     {"prefill-1", {BurstKind::prefill, 8, 256, 512, 256, 2}},
                     {"embed-1", {BurstKind::embed, 2, 16, 128, 128, 1}}};
  options.watchdog.deadline = std::chrono::milliseconds(200);
  return options;
}

constexpr double kMarginMs = 150.0;  // poll interval plus scheduling on a loaded 2-core box

TEST(FaultDetection, EveryInjectedHangIsDetectedUnderConcurrent) {
  ReproOptions options = small_engines(TurnPolicy::concurrent, 8.0);
  options.faults.hang_rate = 1.0;
  options.faults.seed = 11;
  const ReproResult r = run_repro(options);
  const auto& hang = r.faults.by_kind.at(FaultKind::hang);
  EXPECT_GT(r.overlap_s, 1.0);
  EXPECT_GT(hang.injected, 0u);
  EXPECT_EQ(hang.detected, hang.injected);
  EXPECT_EQ(r.faults.recovered, hang.detected);
  EXPECT_EQ(r.faults.detect_latency_ms.count, hang.detected);
  // The watchdog sees buffers, not ops: a stall that begins mid-buffer is measured from
  // the buffer's last progress, so detection can come a little before a full deadline.
  EXPECT_GT(r.faults.detect_latency_ms.p50, 100.0);
  EXPECT_LE(r.faults.detect_latency_ms.max, 200.0 + kMarginMs);
  EXPECT_FALSE(r.faults.fatal);
  std::uint64_t blamed = 0;
  for (const EngineResult& e : r.engines) blamed += e.hangs;
  EXPECT_EQ(blamed, hang.detected);
}

TEST(FaultDetection, NoHangIsInjectedOrDetectedUnderSerialize) {
  ReproOptions options = small_engines(TurnPolicy::serialize, 5.0);
  options.faults.hang_rate = 1.0;
  options.faults.seed = 11;
  const ReproResult r = run_repro(options);
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.faults.injected(), 0u);
  EXPECT_EQ(r.faults.detected(), 0u);
}

TEST(FaultDetection, SoakWithoutInjectionDetectsNothing) {
  for (TurnPolicy policy : {TurnPolicy::concurrent, TurnPolicy::serialize}) {
    const ReproResult r = run_repro(small_engines(policy, 10.0));
    EXPECT_EQ(r.faults.detected(), 0u)
        << to_string(policy) << ": " << (r.events.empty() ? "" : r.events[0].detail);
    std::uint64_t steps = 0;
    for (const EngineResult& e : r.engines) steps += e.steps;
    EXPECT_GT(steps, 500u);
  }
}

}  // namespace
}  // namespace baton
