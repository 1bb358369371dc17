#include "baton/gpu/cuda/share_placement.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "baton/gpu/cuda/cublas_library.h"
#include "baton/gpu/cuda/cuda_error.h"

namespace baton::cuda {

SharePlacement::Mode SharePlacement::mode_from_env() {
  const char* mode = std::getenv("BATON_CUDA_PARTITION");
  if (mode == nullptr || std::string_view(mode) == "green") return Mode::green;
  if (std::string_view(mode) == "sm-target") return Mode::sm_target;
  throw std::invalid_argument("BATON_CUDA_PARTITION must be green or sm-target, not '" +
                              std::string(mode) + "'");
}

int SharePlacement::multiprocessors() {
  int device = 0;
  int count = 0;
  BATON_CUDA_CHECK(cudaGetDevice(&device));
  BATON_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

SharePlacement::SharePlacement(int fixed_sm_target)
    : fixed_sm_target_(fixed_sm_target), sm_count_(multiprocessors()), mode_(mode_from_env()) {}

void SharePlacement::set_share(double share, bool prefill) {
  if (share >= 1.0) {
    prefill_sms_ = 0;
    return;
  }
  const double prefill_fraction = prefill ? share : 1.0 - share;
  prefill_sms_ = std::max(1, static_cast<int>(prefill_fraction * sm_count_ + 0.5));
}

cudaStream_t SharePlacement::prepare(CudaStream& stream, bool prefill, cublasHandle_t cublas) {
  std::shared_ptr<const GreenPartition> partition;
  int target = fixed_sm_target_;
  if (fixed_sm_target_ == 0 && prefill_sms_ > 0) {
    if (mode_ == Mode::green) partition = stream.partition(prefill_sms_);
    // cuBLAS sizes its grids for the whole chip unless told; decode keeps its kernels.
    if (prefill) target = partition ? partition->sms(Side::prefill) : prefill_sms_;
  }
  const cudaStream_t placed = stream.place(partition, prefill ? Side::prefill : Side::decode);
  BATON_CUBLAS_CHECK(cublas_api().set_stream(cublas, placed));
  if (applied_target_ != target) {
    BATON_CUBLAS_CHECK(cublas_api().set_sm_count_target(cublas, target));
    applied_target_ = target;
  }
  return placed;
}

}  // namespace baton::cuda
