// CpuDevice: the CPU backend. Each stream is one executor thread; kernels run on it
// single-threaded (BLAS is pinned to one thread), so a stream is one core's worth of device.
// Thread-safety: as Device.
#pragma once

#include "baton/gpu/device.h"

namespace baton::cpu {

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(CommitLimits limits = CommitLimits::from_env(), FaultHooks* faults = nullptr);
  std::string_view backend() const override { return "cpu"; }

 protected:
  std::unique_ptr<Stream> make_stream(StreamId id, std::string name) override;
};

}  // namespace baton::cpu
