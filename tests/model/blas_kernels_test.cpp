// Which OpenBLAS kernel set baton asks for when OpenBLAS's own detection fell back to a
// pre-AVX one, and that a baton started without OPENBLAS_CORETYPE runs with fitting kernels.
#include "baton/model/cpu/kernels/blas_kernels.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

namespace baton {
namespace {

TEST(BlasKernels, AFallbackPickIsReplacedByTheBestSetTheCpuRuns) {
  const CpuVectorSupport avx512{.avx512 = true, .avx2_fma = true};
  const CpuVectorSupport avx2{.avx512 = false, .avx2_fma = true};
  EXPECT_EQ(blas_core_to_force("Prescott", avx512), "SkylakeX");
  EXPECT_EQ(blas_core_to_force("Prescott", avx2), "Haswell");
  EXPECT_EQ(blas_core_to_force("Nehalem", avx2), "Haswell");
  EXPECT_EQ(blas_core_to_force("Prescott", CpuVectorSupport{}), "");
}

TEST(BlasKernels, AnAvxPickStands) {
  const CpuVectorSupport avx512{.avx512 = true, .avx2_fma = true};
  for (const char* picked : {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen"}) {
    EXPECT_EQ(blas_core_to_force(picked, avx512), "") << picked;
  }
}

// OPENBLAS_VERBOSE=2 makes OpenBLAS print "Core: NAME" when it loads: once, or twice when
// baton ran itself again. Whatever this CPU is, the kernels baton ends on are no fallback
// the CPU outgrows.
TEST(BlasKernels, BatonRunsWithKernelsThatFitTheCpu) {
  const testing::CommandResult r = testing::run_command(
      "env -u OPENBLAS_CORETYPE OPENBLAS_VERBOSE=2 " + std::string(BATON_BINARY) + " --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> cores;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Core: ", 0) == 0) cores.push_back(line.substr(6));
  }
  ASSERT_FALSE(cores.empty()) << r.output;
  ASSERT_LE(cores.size(), 2u) << r.output;
  const CpuVectorSupport cpu = detect_cpu_vector_support();
  EXPECT_EQ(blas_core_to_force(cores.back(), cpu), "") << r.output;
  if (cores.size() == 2) {
    EXPECT_NE(blas_core_to_force(cores.front(), cpu), "") << r.output;
  }
}

}  // namespace
}  // namespace baton
