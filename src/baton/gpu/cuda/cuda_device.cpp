#include "baton/gpu/cuda/cuda_device.h"

#include "baton/gpu/backend_unavailable.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/cuda_stream.h"

namespace baton::cuda {

CudaDevice::CudaDevice(CommitLimits limits, FaultHooks* faults) : Device(limits, faults) {
  if (!device_present()) {
    throw BackendUnavailable("[cuda] the cuda backend needs a GPU, and none is visible");
  }
  BATON_CUDA_CHECK(cudaSetDevice(0));
  create_default_stream();
}

std::unique_ptr<Stream> CudaDevice::make_stream(StreamId id, std::string name) {
  return std::make_unique<CudaStream>(id, std::move(name), limits(), observers(), faults(),
                                      &partitions_);
}

std::optional<DeviceMemory> CudaDevice::memory() const {
  BATON_CUDA_CHECK(cudaSetDevice(0));  // the calling thread's device: ours
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  BATON_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return DeviceMemory{.total_bytes = total_bytes, .free_bytes = free_bytes};
}

std::string CudaDevice::pci_bus_id() const {
  char id[32] = {};  // "0000:01:00.0" and its terminator, with room to spare
  BATON_CUDA_CHECK(cudaDeviceGetPCIBusId(id, static_cast<int>(sizeof id), 0));
  return id;
}

}  // namespace baton::cuda
