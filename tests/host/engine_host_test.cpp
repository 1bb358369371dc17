#include "baton/host/engine_host.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/gpu/cpu/cpu_device.h"

namespace baton {
namespace {

using namespace std::chrono_literals;

// Several decode, prefill and embedding engines under load for a while; returns the
// overlap reading. Shapes are small so the test is quick, with many hand-overs.
OverlapReading stress(const TurnOptions& options, std::chrono::milliseconds duration,
                      std::uint64_t* bursts_done) {
  EngineHost host(std::make_unique<cpu::CpuDevice>(
                      CommitLimits{.max_ops = 4, .max_bytes = std::size_t{1} << 30}),
                  options);
  const SyntheticShape decode{.kind = BurstKind::decode, .layers = 8, .rows = 4, .k = 64, .n = 64};
  const SyntheticShape prefill{
      .kind = BurstKind::prefill, .layers = 8, .rows = 96, .k = 64, .n = 64};
  const SyntheticShape embed{.kind = BurstKind::embed, .layers = 2, .rows = 16, .k = 32, .n = 32};
  std::vector<Engine*> engines;
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    engines.push_back(&host.add_engine("decode-" + n, std::make_unique<SyntheticWorkload>(decode)));
    engines.push_back(
        &host.add_engine("prefill-" + n, std::make_unique<SyntheticWorkload>(prefill)));
    engines.push_back(&host.add_engine("embed-" + n, std::make_unique<SyntheticWorkload>(embed)));
  }
  std::vector<std::jthread> clients;
  for (Engine* engine : engines) {
    clients.emplace_back([&engine = *engine](std::stop_token stop) {
      for (std::uint64_t id = 1; !stop.stop_requested(); ++id) {
        try {
          engine.submit(Request{.id = id, .bursts = 3}).get();
        } catch (const EngineStopped&) {
          return;
        }
      }
    });
  }
  std::this_thread::sleep_for(duration);
  for (auto& c : clients) c.request_stop();
  host.stop();
  clients.clear();
  *bursts_done = 0;
  for (const Engine* engine : engines) *bursts_done += engine->stats().burst_ms.size();
  return host.device().overlap().read();
}

TurnOptions serialize(Quantum quantum, bool decode_first) {
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  options.quantum = quantum;
  options.decode_first = decode_first;
  return options;
}

TEST(EngineHost, SerializeMeansZeroOverlapPerBurst) {
  std::uint64_t bursts = 0;
  const OverlapReading r = stress(serialize(Quantum::burst, false), 1500ms, &bursts);
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.episodes, 0u);
  EXPECT_EQ(r.max_busy, 1u);
  EXPECT_GT(bursts, 100u);
}

TEST(EngineHost, SerializeMeansZeroOverlapPerLayerWithDecodeFirst) {
  std::uint64_t bursts = 0;
  const OverlapReading r = stress(serialize(Quantum::layer, true), 1500ms, &bursts);
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.max_busy, 1u);
  EXPECT_GT(bursts, 100u);
}

TEST(EngineHost, SerializeMeansZeroOverlapPerOp) {
  std::uint64_t bursts = 0;
  const OverlapReading r = stress(serialize(Quantum::op, false), 1000ms, &bursts);
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.max_busy, 1u);
  EXPECT_GT(bursts, 50u);
}

TEST(EngineHost, ConcurrentOverlapsAndTheMeterSeesIt) {
  std::uint64_t bursts = 0;
  const OverlapReading r = stress(TurnOptions{}, 1000ms, &bursts);
  EXPECT_GT(r.overlap_s, 0.0);
  EXPECT_GE(r.max_busy, 2u);
}

}  // namespace
}  // namespace baton
