// CudaLongDispatchWorkload: LongDispatchWorkload on the GPU. Each layer is one launch of
// the long-attention kernel (long_attention_kernel.h) over bf16 K and V on the device:
// at the H200 default (32 heads, 229376 keys) one launch reads 7.5 GB with 32 SMs busy.
// Thread-safety: one engine thread encodes; the cache is written once at construction.
#pragma once

#include <vector>

#include "baton/engine/synthetic/long_dispatch_workload.h"
#include "baton/gpu/cuda/cuda_handles.h"

namespace baton::cuda {

class CudaLongDispatchWorkload final : public Workload {
 public:
  explicit CudaLongDispatchWorkload(AttentionShape shape);
  BurstKind kind() const override { return BurstKind::decode; }
  std::size_t context_tokens() const override { return shape_.keys; }
  void encode_burst(Stream& stream, const std::function<void(Boundary)>& yield_point) override;

  // For tests: q, K, V (widened from bf16) and the last output (synchronizes the device).
  struct HostCopy {
    std::vector<float> q, k, v, out;
  };
  HostCopy copy_back() const;

 private:
  AttentionShape shape_;
  DeviceBuffer q_;    // heads * 256 f32
  DeviceBuffer k_;    // heads * keys * 256 bf16
  DeviceBuffer v_;    // the same
  DeviceBuffer out_;  // heads * 256 f32
};

}  // namespace baton::cuda
