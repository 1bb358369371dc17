#include "baton/gpu/cpu/cpu_device.h"

#include "baton/gpu/cpu/cpu_stream.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace baton::cpu {

CpuDevice::CpuDevice(CommitLimits limits, FaultHooks* faults) : Device(limits, faults) {
  // One BLAS thread per call: parallelism comes from streams, as queues share a GPU.
  openblas_set_num_threads(1);
  create_default_stream();
}

std::unique_ptr<Stream> CpuDevice::make_stream(StreamId id, std::string name) {
  return std::make_unique<CpuStream>(id, std::move(name), limits(), observers(), faults());
}

}  // namespace baton::cpu
