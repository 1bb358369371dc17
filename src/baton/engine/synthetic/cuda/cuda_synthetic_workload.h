// CudaSyntheticWorkload: the synthetic engines on the GPU, with the shapes of the H200 lab
// measurement (../shared/lab/h200-two-engines.md) as defaults: 32 layers, each a bf16
// weight [4096 x 32768] (8.6 GB per engine); a decode step multiplies 8 rows by every
// layer (memory-bound), a prefill chunk 2048 or 8192 rows (compute-bound). Each layer is
// `ops_per_layer` cuBLAS GemmEx calls over column blocks (the lab: 1), f32 accumulation.
// `sm_count_target` (0: the whole chip) asks cuBLAS to size its kernels for part of the
// SMs, as the lab's SM-split rows did; without it the turn's device share decides.
// Thread-safety: one engine thread encodes; weights are written once at construction.
#pragma once

#include <memory>
#include <vector>

#include "baton/engine/synthetic/synthetic_workload.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/share_placement.h"

namespace baton::cuda {

// The lab's shapes for each kind (prefill `tokens` 0: 8192).
SyntheticShape lab_shape(BurstKind kind, std::size_t tokens = 0);

class CudaSyntheticWorkload final : public Workload {
 public:
  explicit CudaSyntheticWorkload(SyntheticShape shape, int sm_count_target = 0);
  BurstKind kind() const override { return shape_.kind; }
  std::size_t context_tokens() const override { return shape_.rows; }
  void encode_burst(Stream& stream, const std::function<void(Boundary)>& yield_point) override;
  // The turn's partition (share_placement.h); a fixed SM target overrides it.
  void set_device_share(double share) override;

  // For tests: the weights, the input and the output as floats (synchronizes the device).
  struct HostCopy {
    std::vector<float> weights, input, output;
  };
  HostCopy copy_back() const;

 private:
  SyntheticShape shape_;
  SharePlacement placement_;  // the encoding thread's ops only
  CublasHandle cublas_;
  DeviceBuffer weights_;  // layers * k * n bf16
  DeviceBuffer input_;    // rows * k
  DeviceBuffer output_;   // rows * n
};

}  // namespace baton::cuda
