// Naming a pid from /proc, as the GPU sampler does for NVML's pids.
#include "baton/gpu/proc_process.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <fstream>
#include <string>

namespace baton {
namespace {

TEST(ProcProcess, NamesThisProcessAsProcDoes) {
  std::ifstream comm("/proc/self/comm");
  std::string expected;
  ASSERT_TRUE(std::getline(comm, expected));
  EXPECT_EQ(process_name(static_cast<std::uint32_t>(::getpid())), expected);
}

TEST(ProcProcess, APidWithNoProcessHasNoName) {
  // Above the kernel's largest pid (2^22).
  EXPECT_EQ(process_name(4'194'305u), std::nullopt);
}

TEST(ProcProcess, ThisProcessRunsAndKeepsItsStartTime) {
  const auto self = static_cast<std::uint32_t>(::getpid());
  const std::optional<ProcStat> first = read_proc_stat(self);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->state, 'R');  // reading its own stat, it runs
  EXPECT_GT(first->start_time, 0u);
  EXPECT_EQ(read_proc_stat(self)->start_time, first->start_time);
  EXPECT_EQ(read_proc_stat(4'194'305u), std::nullopt);
}

}  // namespace
}  // namespace baton
