// The CUDA backend on a real GPU: ordered completion, the bf16 GEMM against a float64
// reference, and a real hang (a spinning kernel) detected by the watchdog and recovered in
// place. Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <vector>

#include "baton/engine/synthetic/cuda/cuda_synthetic_workload.h"
#include "baton/gpu/cuda/cuda_device.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/host/engine_host.h"
#include "skip_without_gpu.h"
#include "test_util.h"

namespace baton::cuda {
namespace {

using namespace std::chrono_literals;
using baton::testing::HangNth;

TEST(CudaBackend, BuffersCompleteInOrder) {
  SKIP_WITHOUT_GPU();
  CudaDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  std::vector<int> order;
  for (int i = 0; i < 20; ++i)
    stream->encode(Op{.run = [&order, i] { order.push_back(i); }, .bytes = 0});
  stream->synchronize();
  EXPECT_EQ(order.size(), 20u);
  const StreamStats stats = stream->stats();
  EXPECT_EQ(stats.committed, 20u);
  EXPECT_EQ(stats.completed, 20u);
  EXPECT_EQ(stats.in_flight, 0u);
}

TEST(CudaBackend, Bf16GemmMatchesAFloat64Reference) {
  SKIP_WITHOUT_GPU();
  CudaDevice device;
  auto stream = device.create_stream("s");
  const SyntheticShape shape{
      .kind = BurstKind::decode, .layers = 2, .rows = 8, .k = 64, .n = 96, .ops_per_layer = 3};
  CudaSyntheticWorkload workload(shape);
  workload.encode_burst(*stream, [](Boundary) {});
  stream->synchronize();
  const auto host = workload.copy_back();
  // The last layer wrote the output: C = A * W[last].
  double worst = 0.0;
  double scale = 0.0;
  for (std::size_t i = 0; i < shape.rows; ++i) {
    for (std::size_t j = 0; j < shape.n; ++j) {
      double ref = 0.0;
      for (std::size_t p = 0; p < shape.k; ++p) {
        ref += double(host.input[i * shape.k + p]) *
               double(host.weights[(shape.layers - 1) * shape.k * shape.n + p * shape.n + j]);
      }
      worst = std::max(worst, std::abs(double(host.output[i * shape.n + j]) - ref));
      scale = std::max(scale, std::abs(ref));
    }
  }
  // bf16 output: 8 bits of mantissa, a relative rounding of at most 2^-8 of the largest.
  EXPECT_GT(scale, 0.1);
  EXPECT_LT(worst / scale, 1e-2) << "worst " << worst << " of " << scale;
}

TEST(CudaBackend, GreenPartitionSplitsTheSmsAndWorkMovesBetweenSidesInOrder) {
  SKIP_WITHOUT_GPU();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  CudaDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  auto& cuda_stream = dynamic_cast<CudaStream&>(*stream);
  const auto partition = cuda_stream.partition(sms / 2);
  ASSERT_NE(partition, nullptr) << "green contexts unavailable";
  EXPECT_GE(partition->sms(Side::prefill), sms / 2);
  EXPECT_EQ(partition->sms(Side::prefill) + partition->sms(Side::decode), sms);
  // Each op runs on another side; the buffers still complete in order.
  std::vector<int> order;
  for (int i = 0; i < 12; ++i) {
    stream->encode(Op{.run =
                          [&, i] {
                            const auto side = i % 3 == 0 ? Side::prefill : Side::decode;
                            cuda_stream.place(i % 3 == 2 ? nullptr : partition, side);
                            order.push_back(i);
                          },
                      .bytes = 0});
  }
  stream->synchronize();
  EXPECT_EQ(order.size(), 12u);
  EXPECT_EQ(stream->stats().completed, 12u);
}

TEST(CudaBackend, ASpinningKernelIsDetectedAndRecoveredInPlace) {
  SKIP_WITHOUT_GPU();
  HangNth hooks(5);
  WatchdogOptions watchdog;
  watchdog.deadline = 200ms;
  EngineHost host(std::make_unique<CudaDevice>(
                      CommitLimits{.max_ops = 2, .max_bytes = std::size_t{1} << 30}, &hooks),
                  TurnOptions{}, watchdog);
  Engine& engine = host.add_engine(
      "decode-1", std::make_unique<CudaSyntheticWorkload>(SyntheticShape{.kind = BurstKind::decode,
                                                                         .layers = 4,
                                                                         .rows = 8,
                                                                         .k = 256,
                                                                         .n = 512,
                                                                         .ops_per_layer = 2}));
  std::vector<std::future<RequestResult>> futures;
  for (std::uint64_t id = 1; id <= 4; ++id)
    futures.push_back(engine.submit(Request{.id = id, .bursts = 2}));
  int failed = 0;
  for (auto& f : futures) {
    ASSERT_EQ(f.wait_for(20s), std::future_status::ready) << "a request was left waiting";
    try {
      f.get();
    } catch (const GpuError& e) {
      EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
      ++failed;
    }
  }
  EXPECT_EQ(hooks.hangs.load(), 1);
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(engine.submit(Request{.id = 99, .bursts = 3}).get().burst_ms.size(),
            3u);  // the stream recovered
  const auto events = host.faults().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].engine, "decode-1");
  ASSERT_TRUE(events[0].detect_latency_ms.has_value());
  // The deadline runs from the last completion; the latency from when the host saw the
  // spinning kernel start, a poll later (0.16 ms short of 200 once on the H200).
  EXPECT_GE(*events[0].detect_latency_ms, 200.0 - 10.0);
  EXPECT_LT(*events[0].detect_latency_ms, 200.0 + 150.0);
  EXPECT_TRUE(baton::testing::eventually([&] { return host.faults().recovered() == 1; }));
}

}  // namespace
}  // namespace baton::cuda
#endif
