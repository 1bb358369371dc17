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

}  // namespace
}  // namespace baton
