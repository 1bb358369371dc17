// CUDA and cuBLAS status codes as GpuErrors. Every runtime call goes through
// BATON_CUDA_CHECK / BATON_CUBLAS_CHECK, which throw a GpuError naming the statement, file
// and line. The class decides recovery: the sticky errors that poison the context
// (illegal address, launch failure, launch timeout, ...) are `submissions_ignored`, fatal:
// the process must exit and be restarted; the rest (out of memory, invalid value) are
// `other`: the request fails and the engine goes on.
// Thread-safety: pure functions.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "baton/gpu/gpu_error.h"

namespace baton::cuda {

// True for the errors after which the CUDA context can no longer be used.
bool is_sticky(cudaError_t status);
GpuErrorClass classify(cudaError_t status);
GpuError to_gpu_error(cudaError_t status, const std::string& where);
GpuError to_gpu_error(cublasStatus_t status, const std::string& where);

[[noreturn]] void throw_cuda(cudaError_t status, const char* statement, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* statement, const char* file,
                               int line);

}  // namespace baton::cuda

#define BATON_CUDA_CHECK(statement)                                             \
  do {                                                                          \
    const cudaError_t baton_status_ = (statement);                              \
    if (baton_status_ != cudaSuccess) {                                         \
      ::baton::cuda::throw_cuda(baton_status_, #statement, __FILE__, __LINE__); \
    }                                                                           \
  } while (false)

#define BATON_CUBLAS_CHECK(statement)                                             \
  do {                                                                            \
    const cublasStatus_t baton_status_ = (statement);                             \
    if (baton_status_ != CUBLAS_STATUS_SUCCESS) {                                 \
      ::baton::cuda::throw_cublas(baton_status_, #statement, __FILE__, __LINE__); \
    }                                                                             \
  } while (false)
