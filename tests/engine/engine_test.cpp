#include "baton/engine/synthetic/engine.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/engine_host.h"
#include "baton/turn/serial_turn.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;

// A workload whose bursts wait on one gate, so a test controls when work finishes.
class GatedWorkload final : public Workload {
 public:
  BurstKind kind() const override { return BurstKind::decode; }
  void encode_burst(Stream& stream, const std::function<void(Boundary)>&) override {
    ++bursts_started;
    stream.encode(gate.op());
  }
  testing::Gate gate;
  std::atomic<int> bursts_started{0};
};

TEST(Engine, RunsRequestsAndRecordsBursts) {
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), TurnOptions{});
  Engine& engine = host.add_engine(
      "decode-1", std::make_unique<SyntheticWorkload>(SyntheticShape{.kind = BurstKind::decode,
                                                                     .layers = 4,
                                                                     .rows = 2,
                                                                     .k = 32,
                                                                     .n = 32,
                                                                     .ops_per_layer = 2}));
  RequestResult result = engine.submit(Request{.id = 7, .bursts = 5}).get();
  EXPECT_EQ(result.id, 7u);
  EXPECT_EQ(result.burst_ms.size(), 5u);
  const EngineStats stats = engine.stats();
  EXPECT_EQ(stats.requests_done, 1u);
  EXPECT_EQ(stats.burst_ms.size(), 5u);
  EXPECT_EQ(engine.stream().stats().ops_committed, 40u);  // 5 bursts x 4 layers x 2 ops
}

TEST(Engine, StopsCleanlyWithRequestsInFlightAndQueued) {
  TurnOptions serialize;
  serialize.policy = TurnPolicy::serialize;
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), serialize);
  auto workload = std::make_unique<GatedWorkload>();
  GatedWorkload& gated = *workload;
  Engine& engine = host.add_engine("decode-1", std::move(workload));
  std::vector<std::future<RequestResult>> futures;
  for (std::uint64_t i = 0; i < 10; ++i)
    futures.push_back(engine.submit(Request{.id = i, .bursts = 3}));
  ASSERT_TRUE(testing::eventually([&] { return gated.bursts_started.load() == 1; }));

  std::thread stopper([&] { host.stop(); });  // blocks until the running burst ends
  std::this_thread::sleep_for(10ms);
  gated.gate.open();
  stopper.join();

  int stopped = 0;
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready) << "a request was left hanging";
    try {
      f.get();
    } catch (const EngineStopped&) {
      ++stopped;
    }
  }
  EXPECT_EQ(stopped, 10);  // the running one stops at its next burst boundary
  EXPECT_EQ(engine.stats().requests_failed, 10u);
  EXPECT_EQ(gated.bursts_started.load(), 1);
  // After stop, new requests fail at once instead of hanging.
  auto late = engine.submit(Request{.id = 99, .bursts = 1});
  ASSERT_EQ(late.wait_for(1s), std::future_status::ready);
  EXPECT_THROW(late.get(), EngineStopped);
}

TEST(Engine, EmbeddingEnginesShareOneExecutorAndTheDefaultStream) {
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), TurnOptions{});
  SyntheticShape small{.kind = BurstKind::embed, .layers = 2, .rows = 4, .k = 16, .n = 16};
  Engine& a = host.add_engine("embed-1", std::make_unique<SyntheticWorkload>(small));
  Engine& b = host.add_engine("embed-2", std::make_unique<SyntheticWorkload>(small));
  EXPECT_EQ(&a.stream(), &host.device().default_stream());
  EXPECT_EQ(&b.stream(), &host.device().default_stream());
  auto fa = a.submit(Request{.id = 1, .bursts = 3});
  auto fb = b.submit(Request{.id = 2, .bursts = 3});
  EXPECT_EQ(fa.get().burst_ms.size(), 3u);
  EXPECT_EQ(fb.get().burst_ms.size(), 3u);
}

TEST(Engine, GpuErrorFailsTheRequestAndTheEngineGoesOn) {
  class FailingOnce final : public Workload {
   public:
    BurstKind kind() const override { return BurstKind::decode; }
    void encode_burst(Stream& stream, const std::function<void(Boundary)>&) override {
      const bool fail = first_;
      first_ = false;
      stream.encode(Op{.run = [fail] {
        if (fail) throw GpuError(GpuErrorClass::timeout, "test", "injected");
      }});
    }

   private:
    bool first_ = true;
  };
  TurnOptions serialize;
  serialize.policy = TurnPolicy::serialize;
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), serialize);
  Engine& engine = host.add_engine("decode-1", std::make_unique<FailingOnce>());
  EXPECT_THROW(engine.submit(Request{.id = 1, .bursts = 2}).get(), GpuError);
  EXPECT_EQ(engine.submit(Request{.id = 2, .bursts = 2}).get().burst_ms.size(), 2u);
  EXPECT_EQ(engine.stats().requests_failed, 1u);
  EXPECT_EQ(engine.stats().requests_done, 1u);
}

}  // namespace
}  // namespace baton
