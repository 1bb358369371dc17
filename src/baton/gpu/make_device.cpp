#include "baton/gpu/make_device.h"

#include <string>

#include "baton/gpu/cpu/cpu_device.h"

namespace baton {

std::unique_ptr<Device> make_device(std::string_view backend, FaultHooks* faults) {
  if (backend == "cpu") return std::make_unique<cpu::CpuDevice>(CommitLimits::from_env(), faults);
  if (backend == "cuda") {
    throw BackendUnavailable("[make_device] the cuda backend is not part of this build yet");
  }
  throw BackendUnavailable("[make_device] unknown backend '" + std::string(backend) +
                           "' (known: cpu)");
}

}  // namespace baton
