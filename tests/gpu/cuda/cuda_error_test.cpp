// The CUDA error classes: runs without a GPU (only the runtime's name tables are used).
#ifdef BATON_HAVE_CUDA
#include "baton/gpu/cuda/cuda_error.h"

#include <gtest/gtest.h>

namespace baton::cuda {
namespace {

TEST(CudaError, StickyErrorsAreFatal) {
  for (cudaError_t sticky :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorLaunchTimeout,
        cudaErrorIllegalInstruction, cudaErrorMisalignedAddress, cudaErrorECCUncorrectable}) {
    const GpuError error = to_gpu_error(sticky, "test");
    EXPECT_EQ(error.error_class(), GpuErrorClass::submissions_ignored) << cudaGetErrorName(sticky);
    EXPECT_TRUE(error.fatal());
  }
}

TEST(CudaError, RecoverableErrorsFailTheRequestOnly) {
  for (cudaError_t recoverable : {cudaErrorMemoryAllocation, cudaErrorInvalidValue}) {
    const GpuError error = to_gpu_error(recoverable, "test");
    EXPECT_EQ(error.error_class(), GpuErrorClass::other);
    EXPECT_FALSE(error.fatal());
    EXPECT_FALSE(error.retryable());
  }
}

TEST(CudaError, CheckNamesTheStatementFileAndLine) {
  try {
    BATON_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const GpuError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_error_test.cpp:"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace baton::cuda
#endif
