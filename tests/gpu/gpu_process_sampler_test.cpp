// The sampler's thread over the fake NVML (fake_nvml.cpp): polls handed over in order and
// back to back, empty ones joined, an NVML error or a failing sink kept and the sampling
// stopped, and NVML's absence a typed result. Where the real libnvidia-ml.so.1 loads (a
// GPU machine), one test asks it for samples.
#include "baton/gpu/gpu_process_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "gpu/fake_nvml.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::FakeNvml;
using testing::kFakeNvml;
using testing::kFakeNvmlBusId;

constexpr auto kPeriod = 20ms;
constexpr auto kDeadline = 10s;

// The polls a sampler hands over, and a wait for one that matches.
class Polls {
 public:
  GpuPollSink sink() {
    return [this](GpuPoll poll) {
      std::lock_guard lock(mu_);
      polls_.push_back(std::move(poll));
      changed_.notify_all();
    };
  }
  template <typename Pred>
  bool wait_for(Pred pred) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kDeadline, [&] { return pred(polls_); });
  }
  std::vector<GpuPoll> all() {
    std::lock_guard lock(mu_);
    return polls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<GpuPoll> polls_;
};

GpuSamplerOptions options() {
  GpuSamplerOptions o;
  o.period = kPeriod;
  o.own_pid = 7;
  o.host_pids = true;
  o.name = [](std::uint32_t pid) -> std::optional<std::string> {
    return "proc-" + std::to_string(pid);
  };
  return o;
}

std::unique_ptr<GpuProcessSampler> started(GpuSamplerStart start) {
  if (auto* u = std::get_if<NvmlUnavailable>(&start)) ADD_FAILURE() << u->message();
  auto* sampler = std::get_if<std::unique_ptr<GpuProcessSampler>>(&start);
  return sampler != nullptr ? std::move(*sampler) : nullptr;
}

bool has_pid(const GpuPoll& poll, std::uint32_t pid, double sm) {
  for (const GpuProcessUse& p : poll.processes) {
    if (p.pid == pid && p.sm_percent == sm) return true;
  }
  return false;
}

template <typename Pred>
bool eventually(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(GpuProcessSampler, HandsOverEveryPollBackToBackAndJoinsEmptyOnes) {
  FakeNvml fake;
  Polls polls;
  auto sampler =
      started(start_gpu_process_sampler(kFakeNvml, kFakeNvmlBusId, options(), polls.sink()));
  ASSERT_NE(sampler, nullptr);
  // Stamped after the sampler's start: newer than where it begins to read; both seen by
  // one poll.
  fake.set_paused(1);
  fake.add_sample(7, FakeNvml::now_us(), 40, 10);
  fake.add_sample(4242, FakeNvml::now_us(), 90, 20);
  fake.set_paused(0);
  ASSERT_TRUE(polls.wait_for(
      [](const auto& all) { return !all.empty() && has_pid(all.back(), 4242, 90.0); }));
  fake.add_sample(4242, FakeNvml::now_us(), 80, 20);
  ASSERT_TRUE(polls.wait_for([](const auto& all) { return has_pid(all.back(), 4242, 80.0); }));
  // Five more polls that find nothing, then the stop hands over the stretch held.
  const std::uint64_t before = sampler->polls();
  ASSERT_TRUE(eventually([&] { return sampler->polls() >= before + 5; }));
  sampler->stop();
  EXPECT_EQ(sampler->error(), std::nullopt);

  const std::vector<GpuPoll> all = polls.all();
  std::size_t first = 0;  // the poll with both processes
  while (first < all.size() && !has_pid(all[first], 4242, 90.0)) ++first;
  ASSERT_LT(first + 2, all.size());
  const GpuPoll& both = all[first];
  ASSERT_EQ(both.processes.size(), 2u);
  EXPECT_EQ(both.processes[0].pid, 7u);
  EXPECT_TRUE(both.processes[0].own);
  EXPECT_EQ(both.processes[0].process, "proc-7");
  EXPECT_DOUBLE_EQ(both.processes[0].sm_percent, 40.0);
  EXPECT_EQ(both.processes[1].pid, 4242u);
  EXPECT_FALSE(both.processes[1].own);
  EXPECT_DOUBLE_EQ(both.processes[1].mem_percent, 20.0);
  // The next poll with a process has the newer sample alone: the older ones were read.
  std::size_t next = first + 1;
  while (next < all.size() && all[next].processes.empty()) ++next;
  ASSERT_LT(next, all.size());
  ASSERT_EQ(all[next].processes.size(), 1u);
  EXPECT_DOUBLE_EQ(all[next].processes[0].sm_percent, 80.0);
  // Back to back, each at least a period long; the idle end is one poll of five or more.
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_GE(all[i].end - all[i].start, 0.019) << i;
    if (i > 0) {
      EXPECT_EQ(all[i].start, all[i - 1].end) << i;
    }
  }
  EXPECT_TRUE(all.back().processes.empty());
  EXPECT_GE(all.back().end - all.back().start, 0.099);
  EXPECT_LT(all.size(), sampler->polls());
}

TEST(GpuProcessSampler, AnNvmlErrorStopsTheSamplingAndIsKept) {
  FakeNvml fake;
  Polls polls;
  auto sampler =
      started(start_gpu_process_sampler(kFakeNvml, kFakeNvmlBusId, options(), polls.sink()));
  ASSERT_NE(sampler, nullptr);
  fake.add_sample(4242, FakeNvml::now_us(), 90, 20);
  ASSERT_TRUE(polls.wait_for([](const auto& all) { return !all.empty(); }));
  fake.fail_next(15);
  ASSERT_TRUE(eventually([&] { return sampler->error().has_value(); }));
  EXPECT_EQ(sampler->error(), "[nvml] nvmlDeviceGetProcessUtilization: GPU is lost (15)");
  const int calls = fake.utilization_calls();
  std::this_thread::sleep_for(5 * kPeriod);
  EXPECT_EQ(fake.utilization_calls(), calls);             // no more polls
  EXPECT_TRUE(has_pid(polls.all().front(), 4242, 90.0));  // what came before stays
}

TEST(GpuProcessSampler, ASinkThatThrowsStopsTheSamplingNotTheProcess) {
  FakeNvml fake;
  auto sampler =
      started(start_gpu_process_sampler(kFakeNvml, kFakeNvmlBusId, options(), [](GpuPoll) {
        throw std::runtime_error("[ledger] disk full");
      }));
  ASSERT_NE(sampler, nullptr);
  fake.add_sample(4242, FakeNvml::now_us(), 90, 20);  // a poll with a process is handed over
  ASSERT_TRUE(eventually([&] { return sampler->error().has_value(); }));
  EXPECT_EQ(sampler->error(), "[ledger] disk full");
}

// Samples NVML held before the sampler started are not its run's.
TEST(GpuProcessSampler, BeginsAfterTheNewestSampleNvmlHolds) {
  FakeNvml fake;
  fake.add_sample(4242, 1000, 90, 20);
  fake.add_sample(4242, 2000, 90, 20);
  Polls polls;
  auto sampler =
      started(start_gpu_process_sampler(kFakeNvml, kFakeNvmlBusId, options(), polls.sink()));
  ASSERT_NE(sampler, nullptr);
  ASSERT_TRUE(eventually([&] { return sampler->polls() >= 3; }));
  EXPECT_EQ(fake.last_since(), 2000u);
  fake.add_sample(4242, 2001, 50, 20);
  ASSERT_TRUE(polls.wait_for(
      [](const auto& all) { return !all.empty() && !all.back().processes.empty(); }));
  sampler->stop();
  for (const GpuPoll& poll : polls.all()) {
    for (const GpuProcessUse& p : poll.processes) EXPECT_EQ(p.sm_percent, 50.0);
  }
}

TEST(GpuProcessSampler, NoLibraryOrNoDeviceIsUnavailable) {
  FakeNvml fake;
  const auto message = [](GpuSamplerStart start) {
    const auto* u = std::get_if<NvmlUnavailable>(&start);
    return u != nullptr ? u->message() : std::string("started");
  };
  EXPECT_EQ(message(start_gpu_process_sampler("/nonexistent/libnvidia-ml.so.1", "", options(),
                                              [](GpuPoll) {}))
                .rfind("NVML unavailable: ", 0),
            0u);
  EXPECT_EQ(
      message(start_gpu_process_sampler(kFakeNvml, "0000:01:00.0", options(), [](GpuPoll) {})),
      "NVML unavailable: [nvml] nvmlDeviceGetHandleByPciBusId_v2(0000:01:00.0): Not Found "
      "(6)");
  EXPECT_EQ(fake.initialised(), 0);  // shut down again
}

// Only where the NVIDIA driver is installed: the real library loads, finds device 0 and
// answers. (The sampler reads NVML's own timestamps back, whatever its clock; the offset
// from the Unix time is printed for the record.)
TEST(NvmlReal, TheDriversLibraryAnswers) {
  NvmlOpenResult opened = NvmlLibrary::open(kNvmlLibraryName);
  if (auto* u = std::get_if<NvmlUnavailable>(&opened)) GTEST_SKIP() << u->message();
  const auto& nvml = std::get<std::unique_ptr<NvmlLibrary>>(opened);
  const NvmlDevice device = nvml->device("");
  const std::vector<NvmlProcessSample> samples = nvml->process_utilization(device, 0);
  std::uint64_t newest = 0;
  for (const NvmlProcessSample& s : samples) {
    EXPECT_LE(s.sm_percent, 100u) << s.pid;
    newest = std::max(newest, s.time_us);
  }
  std::cout << "[ NvmlReal ] " << samples.size() << " samples held; the newest "
            << (static_cast<double>(FakeNvml::now_us()) - static_cast<double>(newest)) / 1e6
            << " s before the Unix time now\n";
}

}  // namespace
}  // namespace baton
