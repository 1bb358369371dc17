#include "baton/host/make_device.h"

#include <string>

#include "baton/gpu/cpu/cpu_device.h"
#ifdef BATON_HAVE_CUDA
#include "baton/gpu/cuda/cuda_device.h"
#endif

namespace baton {

std::unique_ptr<Device> make_device(std::string_view backend, FaultHooks* faults,
                                    CommitLimits limits) {
  if (backend == "cpu") return std::make_unique<cpu::CpuDevice>(limits, faults);
  if (backend == "cuda") {
#ifdef BATON_HAVE_CUDA
    return std::make_unique<cuda::CudaDevice>(limits, faults);
#else
    throw BackendUnavailable("[make_device] this build has no cuda backend (built without nvcc)");
#endif
  }
  throw BackendUnavailable("[make_device] unknown backend '" + std::string(backend) +
                           "' (known: cpu, cuda)");
}

}  // namespace baton
