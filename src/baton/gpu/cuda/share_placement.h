// SharePlacement: where one engine's launches go for the share of the device the turn gives
// it (the partition policy). A share below 1 puts the following launches on this kind's
// side of a green-context split of the SMs (prefill: the share, decode: the rest) and
// sizes cuBLAS's kernels for the prefill side; with BATON_CUDA_PARTITION=sm-target, or
// where the driver has no green contexts, prefill gets the cuBLAS SM target alone. A fixed
// SM target (the lab's SM-split rows) overrides the share.
// Thread-safety: one engine's ops, one at a time (set_share between them).
#pragma once

#include <cublas_v2.h>

#include "baton/gpu/cuda/cuda_stream.h"

namespace baton::cuda {

class SharePlacement {
 public:
  enum class Mode { green, sm_target };
  // BATON_CUDA_PARTITION: green (default) or sm-target; std::invalid_argument otherwise.
  static Mode mode_from_env();
  // The multiprocessors of the current device (GpuError when it cannot be read).
  static int multiprocessors();

  explicit SharePlacement(int fixed_sm_target = 0);
  // The share the following launches should size themselves for (1: the whole chip).
  void set_share(double share, bool prefill);
  // Inside an op: moves `stream`'s next launches to their side of the split (or the whole
  // chip), points `cublas` at that stream with the SM target, and returns the stream.
  cudaStream_t prepare(CudaStream& stream, bool prefill, cublasHandle_t cublas);

 private:
  const int fixed_sm_target_;  // 0: follow the share
  const int sm_count_;
  const Mode mode_;
  int prefill_sms_ = 0;  // of the wanted split; 0: the whole chip
  int applied_target_ = -1;
};

}  // namespace baton::cuda
