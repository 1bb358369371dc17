// One poll from NVML's samples (poll_of): a process per pid with the mean of its newer
// samples, capped at 100; idle processes left out; baton's own pid marked and pids named
// only where they are the host's.
#include <gtest/gtest.h>

#include "baton/gpu/gpu_process_sampler.h"

namespace baton {
namespace {

const std::vector<NvmlProcessSample> kSamples = {
    {.pid = 7, .time_us = 10, .sm_percent = 40, .mem_percent = 10},
    {.pid = 7, .time_us = 20, .sm_percent = 60, .mem_percent = 20},  // baton: mean 50 sm, 15 mem
    {.pid = 9, .time_us = 15, .sm_percent = 95, .mem_percent = 30},
    {.pid = 9,
     .time_us = 5,
     .sm_percent = 0,
     .mem_percent = 0},  // the second is older than the poll's start: ignored
    {.pid = 12, .time_us = 12, .sm_percent = 0, .mem_percent = 0},    // idle: left out
    {.pid = 13, .time_us = 11, .sm_percent = 250, .mem_percent = 0},  // capped at 100
};

TEST(GpuPoll, OneProcessPerPidWithTheMeanOfItsNewerSamples) {
  GpuSamplerOptions options;
  options.own_pid = 7;
  options.host_pids = true;
  options.name = [](std::uint32_t pid) -> std::optional<std::string> {
    if (pid == 7) return "baton";
    if (pid == 9) return "omlx";
    return std::nullopt;
  };
  const GpuPoll poll = poll_of(kSamples, 8, 100.0, 101.0, options);
  EXPECT_EQ(poll.start, 100.0);
  EXPECT_EQ(poll.end, 101.0);
  EXPECT_TRUE(poll.host_pids);
  ASSERT_EQ(poll.processes.size(), 3u);
  EXPECT_EQ(poll.processes[0].pid, 7u);
  EXPECT_TRUE(poll.processes[0].own);
  EXPECT_EQ(poll.processes[0].process, "baton");
  EXPECT_DOUBLE_EQ(poll.processes[0].sm_percent, 50.0);
  EXPECT_DOUBLE_EQ(poll.processes[0].mem_percent, 15.0);
  EXPECT_EQ(poll.processes[1].pid, 9u);
  EXPECT_FALSE(poll.processes[1].own);
  EXPECT_EQ(poll.processes[1].process, "omlx");
  EXPECT_DOUBLE_EQ(poll.processes[1].sm_percent, 95.0);
  EXPECT_DOUBLE_EQ(poll.processes[1].mem_percent, 30.0);
  EXPECT_EQ(poll.processes[2].pid, 13u);
  EXPECT_EQ(poll.processes[2].process, std::nullopt);
  EXPECT_DOUBLE_EQ(poll.processes[2].sm_percent, 100.0);
}

TEST(GpuPoll, ForeignPidsAreNeitherNamedNorOwn) {
  GpuSamplerOptions options;
  options.own_pid = 7;
  options.host_pids = false;
  options.name = [](std::uint32_t) -> std::optional<std::string> {
    ADD_FAILURE() << "a pid of another namespace was named";
    return std::nullopt;
  };
  const GpuPoll poll = poll_of(kSamples, 8, 0.0, 1.0, options);
  EXPECT_FALSE(poll.host_pids);
  ASSERT_EQ(poll.processes.size(), 3u);
  for (const GpuProcessUse& p : poll.processes) {
    EXPECT_FALSE(p.own);
    EXPECT_EQ(p.process, std::nullopt);
  }
}

TEST(GpuPoll, NoNewerSampleIsAnEmptyPoll) {
  GpuSamplerOptions options;
  options.own_pid = 7;
  EXPECT_TRUE(poll_of(kSamples, 20, 0.0, 1.0, options).processes.empty());
}

}  // namespace
}  // namespace baton
