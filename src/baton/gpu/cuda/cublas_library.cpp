#include "baton/gpu/cuda/cublas_library.h"

#include <dlfcn.h>

#include "baton/gpu/gpu_error.h"

// cublas_v2.h names most entry points by macro (cublasCreate -> cublasCreate_v2): the
// symbol to resolve is the expanded name.
#define BATON_CUBLAS_SYMBOL_(name) #name
#define BATON_CUBLAS_SYMBOL(name) BATON_CUBLAS_SYMBOL_(name)

namespace baton::cuda {
namespace {

GpuError unavailable(const std::string& detail) {
  return GpuError(GpuErrorClass::other, "cublas", "cuBLAS unavailable: " + detail);
}

// The first of `paths` that opens, or a GpuError with every path's reason.
void* open_first(const std::vector<std::string>& paths) {
  std::string reasons;
  for (const std::string& path : paths) {
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + (why != nullptr ? std::string(why) : path);
  }
  throw unavailable(reasons);
}

template <typename Fn>
void resolve(void* handle, const char* symbol, Fn& fn) {
  // POSIX guarantees that dlsym's object pointer converts to a function pointer.
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr) throw unavailable(std::string("the library has no ") + symbol);
}

}  // namespace

std::string cublas_soname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

CublasLibrary::CublasLibrary(const std::vector<std::string>& paths) : handle_(open_first(paths)) {
  try {
#define BATON_RESOLVE(field, name) resolve(handle_, BATON_CUBLAS_SYMBOL(name), functions_.field)
    BATON_RESOLVE(create, cublasCreate);
    BATON_RESOLVE(destroy, cublasDestroy);
    BATON_RESOLVE(set_stream, cublasSetStream);
    BATON_RESOLVE(get_stream, cublasGetStream);
    BATON_RESOLVE(set_workspace, cublasSetWorkspace);
    BATON_RESOLVE(set_sm_count_target, cublasSetSmCountTarget);
    BATON_RESOLVE(status_name, cublasGetStatusName);
    BATON_RESOLVE(status_string, cublasGetStatusString);
    BATON_RESOLVE(gemm_ex, cublasGemmEx);
    BATON_RESOLVE(gemm_strided_batched_ex, cublasGemmStridedBatchedEx);
#undef BATON_RESOLVE
  } catch (...) {
    dlclose(handle_);
    throw;
  }
}

CublasLibrary::~CublasLibrary() { dlclose(handle_); }

const CublasFunctions& cublas_api() {
  static const CublasLibrary library(
      {cublas_soname(), std::string(BATON_CUDA_LIBRARY_DIR) + "/" + cublas_soname()});
  return library.functions();
}

}  // namespace baton::cuda
