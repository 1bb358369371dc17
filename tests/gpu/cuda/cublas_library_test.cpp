// cuBLAS opened at run time: every entry point resolves from the toolkit's library (no GPU
// needed to open it), a library that is not there is a GpuError naming each path tried,
// and the baton binary does not load cuBLAS until a product needs it.
#ifdef BATON_HAVE_CUDA
#include "baton/gpu/cuda/cublas_library.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/gpu_error.h"

namespace baton::cuda {
namespace {

TEST(CublasLibrary, EveryFunctionResolves) {
  const CublasFunctions& f = cublas_api();
  EXPECT_NE(f.create, nullptr);
  EXPECT_NE(f.gemm_ex, nullptr);
  EXPECT_NE(f.gemm_strided_batched_ex, nullptr);
  // The status tables answer without a device: the names are cuBLAS's own.
  EXPECT_STREQ(f.status_name(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  const std::string what = to_gpu_error(CUBLAS_STATUS_INVALID_VALUE, "here").what();
  EXPECT_NE(what.find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << what;
}

TEST(CublasLibrary, AMissingLibraryNamesEveryPathTried) {
  try {
    CublasLibrary library({"/nonexistent/libcublas.so.0", "libbaton-no-such-cublas.so"});
    FAIL() << "opened a library that is not there";
  } catch (const GpuError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.error_class(), GpuErrorClass::other);
    EXPECT_NE(what.find("cuBLAS unavailable"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libcublas.so.0"), std::string::npos) << what;
    EXPECT_NE(what.find("libbaton-no-such-cublas.so"), std::string::npos) << what;
  }
}

TEST(CublasLibrary, ALibraryWithoutTheFunctionsIsNamedAsSuch) {
  // libc opens but holds no cuBLAS entry point.
  try {
    CublasLibrary library({"libc.so.6"});
    FAIL() << "resolved cuBLAS from libc";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("has no cublasCreate_v2"), std::string::npos) << e.what();
  }
}

TEST(CublasLibrary, TheBinaryDoesNotLinkIt) {
  // Mapping libcublasLt cost every baton process ~0.4 s and ~210 MB at start-up.
  std::ifstream binary(BATON_BINARY, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(binary)),
                          std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find("libcublasLt.so"), std::string::npos);
  EXPECT_EQ(bytes.find(cublas_soname()), std::string::npos) << "baton links " << cublas_soname();
}

}  // namespace
}  // namespace baton::cuda
#endif
