// cuBLAS opened at run time (dlopen), never linked: mapping libcublasLt costs a process
// ~0.4 s and ~210 MB at start-up, which every `baton` command paid, the CPU-only ones too.
// The first product on the GPU opens it; a missing library is a GpuError naming it.
// Only the entry points baton calls are resolved; their types come from cublas_v2.h.
// Thread-safety: cublas() opens the library once (thread-safe static initialisation); the
// table is immutable after.
#pragma once

#include <cublas_v2.h>

#include <string>
#include <vector>

namespace baton::cuda {

// cublasGemmEx and cublasGemmStridedBatchedEx have C++ overloads (cudaDataType compute
// types): the C entry points' types are spelled out.
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void*, const void*, cudaDataType, int,
                                        const void*, cudaDataType, int, const void*, void*,
                                        cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedEx = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
    cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasFunctions {
  decltype(&::cublasCreate) create = nullptr;
  decltype(&::cublasDestroy) destroy = nullptr;
  decltype(&::cublasSetStream) set_stream = nullptr;
  decltype(&::cublasGetStream) get_stream = nullptr;
  decltype(&::cublasSetWorkspace) set_workspace = nullptr;
  decltype(&::cublasSetSmCountTarget) set_sm_count_target = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  CublasGemmEx gemm_ex = nullptr;
  CublasGemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
};

class CublasLibrary {
 public:
  // Opens the first of `paths` that opens (a soname is looked up as dlopen does) and
  // resolves every function. Throws GpuError (class other) with each path's reason, or
  // naming the missing function.
  explicit CublasLibrary(const std::vector<std::string>& paths);
  ~CublasLibrary();
  CublasLibrary(const CublasLibrary&) = delete;
  CublasLibrary& operator=(const CublasLibrary&) = delete;

  const CublasFunctions& functions() const { return functions_; }

 private:
  void* handle_ = nullptr;
  CublasFunctions functions_;
};

// The soname of the cuBLAS baton was compiled against ("libcublas.so.13").
std::string cublas_soname();

// The process's cuBLAS, opened on the first call: by soname, then from the toolkit's
// library folder at build time. Throws GpuError when neither opens.
const CublasFunctions& cublas_api();

}  // namespace baton::cuda
