// Other GPU clients from end to end on the fake NVML (gpu/fake_nvml.cpp): the sampler's
// polls into a real ledger, read back, and the analysis of them; NVML's absence one line on
// the log and no sampler.
#include "baton/ledger/gpu_sampling.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "baton/analysis/hang_analysis.h"
#include "baton/common/clock.h"
#include "baton/gpu/proc_process.h"
#include "baton/ledger/ledger_reader.h"
#include "gpu/fake_nvml.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::FakeNvml;
using testing::kFakeNvml;
using testing::kFakeNvmlBusId;
using testing::TempLedgerPath;

// Stands for the CUDA device: what the sampling asks of it is its PCI bus id.
class BusDevice final : public Device {
 public:
  explicit BusDevice(std::string bus_id) : Device(CommitLimits{}, nullptr), bus_id_(bus_id) {}
  std::string_view backend() const override { return "cuda"; }
  std::string pci_bus_id() const override { return bus_id_; }

 protected:
  std::unique_ptr<Stream> make_stream(StreamId, std::string) override {
    throw std::logic_error("the sampling makes no stream");
  }

 private:
  std::string bus_id_;
};

// Above the kernel's largest pid: NVML's pid of a process in another container, unnamed.
constexpr std::uint32_t kOtherPid = 4'194'400;

TEST(GpuSampling, PollsReachTheLedgerAndTheAnalysis) {
  TempLedgerPath file;
  FakeNvml fake;
  const BusDevice device(kFakeNvmlBusId);
  const auto own = static_cast<std::uint32_t>(::getpid());
  std::ostringstream log;
  double t0 = 0.0, t1 = 0.0;
  std::uint64_t polled = 0;
  {
    Ledger ledger(file.path());
    const auto run = ledger.begin_run({.start = unix_seconds_now(),
                                       .version = "test",
                                       .backend = "cuda",
                                       .policy = "serialize/op",
                                       .streams_recorded = true});
    t0 = unix_seconds_now();
    auto sampler = start_gpu_sampling(ledger, run, device, log, "test", {kFakeNvml, 20ms, true});
    ASSERT_NE(sampler, nullptr) << log.str();
    fake.set_paused(1);
    fake.add_sample(own, FakeNvml::now_us(), 30, 5);
    fake.add_sample(kOtherPid, FakeNvml::now_us(), 95, 40);
    fake.set_paused(0);
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (fake.utilization_calls() < 8 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(5ms);
    }
    polled = sampler->polls();
    stop_gpu_sampling(sampler, log, "test");
    t1 = unix_seconds_now();
    // The LLM engine busy all along.
    ledger.record(IntervalRow{.run_id = run,
                              .engine = "chat",
                              .kind = "decode",
                              .start = t0,
                              .end = t1,
                              .context_tokens = 64,
                              .request_id = 1});
    ledger.end_run(run, t1, 0);
  }
  EXPECT_EQ(log.str(), "");
  const LedgerContents contents = read_ledger(file.path());
  const std::vector<GpuUsePoll>& polls = contents.input.gpu_polls;
  ASSERT_GE(polls.size(), 2u);
  EXPECT_LT(polls.size(), polled);  // the empty ones joined
  // One poll saw both processes; every other found none.
  const GpuUsePoll* seen = nullptr;
  for (const GpuUsePoll& p : polls) {
    if (!p.processes.empty()) {
      EXPECT_EQ(seen, nullptr) << "two polls with processes";
      seen = &p;
    }
  }
  ASSERT_NE(seen, nullptr);
  ASSERT_EQ(seen->processes.size(), 2u);
  EXPECT_EQ(seen->processes[0].pid, own);
  EXPECT_TRUE(seen->processes[0].own);
  EXPECT_EQ(seen->processes[0].process, process_name(own).value_or(""));
  EXPECT_DOUBLE_EQ(seen->processes[0].sm_percent, 30.0);
  EXPECT_EQ(seen->processes[1].pid, kOtherPid);
  EXPECT_FALSE(seen->processes[1].own);
  EXPECT_EQ(seen->processes[1].process, "");
  EXPECT_DOUBLE_EQ(seen->processes[1].sm_percent, 95.0);
  EXPECT_DOUBLE_EQ(seen->processes[1].mem_percent, 40.0);

  // The polls cover [first start, last end] inside the busy [t0, t1]: the other process's
  // 95 % holds over its poll's share of that.
  const double sampled = polls.back().end - polls.front().start;
  const double share = (seen->end - seen->start) / sampled;
  AnalysisOptions options;
  const Analysis analysis = analyze_hangs(contents.input, options);
  ASSERT_TRUE(analysis.gpu_clients.has_value());
  const GpuClients& g = *analysis.gpu_clients;
  EXPECT_NEAR(g.busy_hours, (t1 - t0) / 3600.0, 1e-9);
  EXPECT_NEAR(g.sampled_busy_hours, sampled / 3600.0, 1e-9);
  EXPECT_NEAR(g.other_mean_sm, 95.0 * share, 1e-6);
  EXPECT_DOUBLE_EQ(g.other_max_sm, 95.0);
  EXPECT_NEAR(g.other_busy_share, share, 1e-9);
  EXPECT_NEAR(g.baton_mean_sm, 30.0 * share, 1e-6);
  ASSERT_EQ(g.top_others.size(), 1u);
  EXPECT_EQ(g.top_others[0].pid, kOtherPid);
}

TEST(GpuSampling, NoNvmlIsOneLineAndNoSampler) {
  TempLedgerPath file;
  Ledger ledger(file.path());
  const auto run = ledger.begin_run({.start = unix_seconds_now(),
                                     .version = "test",
                                     .backend = "cuda",
                                     .policy = "serialize/op",
                                     .streams_recorded = true});
  const BusDevice device(kFakeNvmlBusId);
  std::ostringstream log;
  auto sampler = start_gpu_sampling(ledger, run, device, log, "baton serve",
                                    {"/nonexistent/libnvidia-ml.so.1", 20ms, true});
  EXPECT_EQ(sampler, nullptr);
  const std::string text = log.str();
  EXPECT_EQ(text.rfind("baton serve: GPU clients not sampled: NVML unavailable: ", 0), 0u) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  stop_gpu_sampling(sampler, log, "baton serve");  // nothing to stop
  ledger.end_run(run, unix_seconds_now(), 0);
  EXPECT_TRUE(read_ledger(file.path()).input.gpu_polls.empty());
}

TEST(GpuSampling, AnErrorThatStoppedTheSamplingIsSaidAtTheEnd) {
  TempLedgerPath file;
  FakeNvml fake;
  Ledger ledger(file.path());
  const auto run = ledger.begin_run({.start = unix_seconds_now(),
                                     .version = "test",
                                     .backend = "cuda",
                                     .policy = "serialize/op",
                                     .streams_recorded = true});
  const BusDevice device(kFakeNvmlBusId);
  std::ostringstream log;
  auto sampler =
      start_gpu_sampling(ledger, run, device, log, "baton repro", {kFakeNvml, 20ms, true});
  ASSERT_NE(sampler, nullptr);
  fake.fail_next(15);
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!sampler->error() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  stop_gpu_sampling(sampler, log, "baton repro");
  EXPECT_EQ(log.str(),
            "baton repro: GPU sampling stopped early: [nvml] nvmlDeviceGetProcessUtilization: "
            "GPU is lost (15)\n");
  ledger.end_run(run, unix_seconds_now(), 0);
}

}  // namespace
}  // namespace baton
