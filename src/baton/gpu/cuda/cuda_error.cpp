#include "baton/gpu/cuda/cuda_error.h"

#include "baton/gpu/cuda/cublas_library.h"

namespace baton::cuda {

bool is_sticky(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

GpuErrorClass classify(cudaError_t status) {
  return is_sticky(status) ? GpuErrorClass::submissions_ignored : GpuErrorClass::other;
}

GpuError to_gpu_error(cudaError_t status, const std::string& where) {
  return GpuError(
      classify(status), "cuda",
      std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ") at " + where);
}

GpuError to_gpu_error(cublasStatus_t status, const std::string& where) {
  // cuBLAS reports a failed kernel as EXECUTION_FAILED; whether the context is poisoned
  // shows in the next runtime call, which is checked and classified there.
  return GpuError(GpuErrorClass::other, "cublas",
                  std::string(cublas_api().status_name(status)) + " (" +
                      cublas_api().status_string(status) + ") at " + where);
}

void throw_cuda(cudaError_t status, const char* statement, const char* file, int line) {
  throw to_gpu_error(status,
                     std::string(statement) + " (" + file + ":" + std::to_string(line) + ")");
}

void throw_cublas(cublasStatus_t status, const char* statement, const char* file, int line) {
  throw to_gpu_error(status,
                     std::string(statement) + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace baton::cuda
