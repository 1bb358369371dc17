// CudaDevice: the CUDA backend (device 0). Every stream, the default stream included, is a
// non-blocking CUDA stream of its own, so no engine's work waits on CUDA's legacy default
// stream.
// Thread-safety: as Device.
#pragma once

#include "baton/gpu/cuda/green_partition.h"
#include "baton/gpu/device.h"

namespace baton::cuda {

class CudaDevice final : public Device {
 public:
  // Throws BackendUnavailable when the runtime sees no CUDA device.
  explicit CudaDevice(CommitLimits limits = CommitLimits::from_env(), FaultHooks* faults = nullptr);
  std::string_view backend() const override { return "cuda"; }
  // cudaMemGetInfo; a CUDA error is thrown as GpuError.
  std::optional<DeviceMemory> memory() const override;
  // cudaDeviceGetPCIBusId; a CUDA error is thrown as GpuError.
  std::string pci_bus_id() const override;

 protected:
  std::unique_ptr<Stream> make_stream(StreamId id, std::string name) override;

 private:
  PartitionCache partitions_;
};

}  // namespace baton::cuda
