// The fault path on a real GPU: a hang counts from when it began on the device, a hang
// that arrives in overlap time lands on work launched long before, and a slowed stream
// runs slower on the device. Skipped where no CUDA device is visible (CI).
#ifdef BATON_HAVE_CUDA
#include <gtest/gtest.h>

#include <set>

#include "baton/gpu/cuda/cuda_device.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/fault_kernels.h"
#include "baton/repro/repro_run.h"
#include "baton/watchdog/watchdog.h"
#include "skip_without_gpu.h"
#include "test_util.h"

namespace baton::cuda {
namespace {

using namespace std::chrono_literals;

// Hangs the chosen buffers (1-based, in commit order) and slows every op by `factor`.
class ChosenFaults final : public FaultHooks {
 public:
  explicit ChosenFaults(std::set<std::uint64_t> hang, double factor = 1.0)
      : hang_(std::move(hang)), factor_(factor) {}
  BufferFault on_commit(StreamId) override {
    return hang_.count(++commits_) != 0 ? BufferFault::hang : BufferFault::none;
  }
  bool stall_now(StreamId) override { return false; }
  double slowdown(StreamId, TimePoint) override { return factor_; }
  void realized(StreamId, BufferFault) override { ++hangs; }
  std::atomic<int> hangs{0};

 private:
  const std::set<std::uint64_t> hang_;
  const double factor_;
  std::atomic<std::uint64_t> commits_{0};
};

Op spin_op(CudaStream& stream, std::chrono::milliseconds length) {
  const auto ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(length).count());
  return Op{.run = [&stream, ns] { BATON_CUDA_CHECK(launch_spin_for(stream.handle(), ns)); }};
}

// Two hung buffers queued behind 450 ms of work (three buffers, each within the deadline):
// one hang, counted from when it began (not from its launch, 450 ms earlier); the second
// was launched before the reset and returns at once, so it never hangs (nor counts).
TEST(CudaFaultPath, ABufferHangCountsFromWhenItBeganOnTheDevice) {
  SKIP_WITHOUT_GPU();
  ChosenFaults hooks({4, 5});
  FaultLog log;
  WatchdogOptions options;
  options.deadline = 200ms;
  Watchdog watchdog(options, log);
  CudaDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}, &hooks);
  device.add_observer(watchdog);
  auto owned = device.create_stream("s");
  auto& stream = dynamic_cast<CudaStream&>(*owned);
  watchdog.watch(stream, "engine");
  watchdog.start();
  for (int i = 0; i < 5; ++i) stream.encode(spin_op(stream, 150ms));  // buffers 1-5
  stream.wait_idle();
  const auto error = stream.take_error();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->error_class(), GpuErrorClass::hang);
  EXPECT_EQ(hooks.hangs.load(), 1);
  const auto events = log.events();
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(events[0].detect_latency_ms.has_value());
  EXPECT_GE(*events[0].detect_latency_ms, 150.0);
  EXPECT_LE(*events[0].detect_latency_ms, 200.0 + 60.0);
  stream.encode(spin_op(stream, 1ms));
  stream.synchronize();  // recovered in place
  watchdog.stop();
}

TEST(CudaFaultPath, ASlowedStreamRunsItsOpsSlowerOnTheDevice) {
  SKIP_WITHOUT_GPU();
  ChosenFaults hooks({}, 4.0);
  CudaDevice device(CommitLimits{}, &hooks);
  auto owned = device.create_stream("s");
  auto& stream = dynamic_cast<CudaStream&>(*owned);
  const TimePoint start = Clock::now();
  for (int i = 0; i < 3; ++i) stream.encode(spin_op(stream, 10ms));
  stream.synchronize();
  const double ms = millis_between(start, Clock::now());
  EXPECT_GE(ms, 110.0);  // 30 ms of ops at 4x is 120 ms
  EXPECT_LE(ms, 200.0);
}

// With the ops of every buffer launched at commit, a hang arriving mid-overlap used to
// find no op boundary on the host and was dropped: about none landed.
TEST(CudaFaultPath, HangsArrivingInOverlapLandAndAreAllDetected) {
  SKIP_WITHOUT_GPU();
  ReproOptions options;
  options.backend = "cuda";
  options.engines = parse_engine_specs({"decode", "prefill:8192/4"}, "cuda");
  options.duration_s = 5.0;
  options.faults.hang_rate = 2.0;
  options.faults.seed = 11;
  options.watchdog.deadline = 200ms;
  const ReproResult r = run_repro(options);
  const auto& hang = r.faults.by_kind.at(FaultKind::hang);
  EXPECT_GT(r.overlap_s, 4.0);
  EXPECT_GE(hang.injected, 2u);  // about 8 expected
  EXPECT_EQ(hang.detected, hang.injected);
  EXPECT_EQ(r.faults.recovered, hang.injected);
  EXPECT_EQ(r.faults.hangs_arrived, hang.injected + r.faults.hangs_dropped);
  EXPECT_LE(r.faults.detect_latency_ms.max, 200.0 + 60.0);
}

}  // namespace
}  // namespace baton::cuda
#endif
