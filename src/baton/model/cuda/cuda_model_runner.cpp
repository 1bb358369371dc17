#include "baton/model/cuda/cuda_model_runner.h"

#include <stdexcept>
#include <string>

#include "baton/common/env.h"
#include "baton/model/cuda/cuda_model_step.h"
#include "baton/model/cuda/flash_attention.h"

namespace baton::cuda {
namespace {

constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

const CudaModel& checked(const std::shared_ptr<const CudaModel>& model) {
  const ModelConfig& c = model->config();
  if (c.head_dim % 2 != 0 || c.head_dim > kernels::kMaxHeadDim) {
    throw std::invalid_argument("the CUDA runner supports an even head_dim up to " +
                                std::to_string(kernels::kMaxHeadDim) + ", not " +
                                std::to_string(c.head_dim));
  }
  if (c.num_heads / c.num_kv_heads > kernels::kMaxGroup) {
    throw std::invalid_argument(
        "the CUDA runner supports at most " + std::to_string(kernels::kMaxGroup) +
        " query heads per kv head, not " + std::to_string(c.num_heads / c.num_kv_heads));
  }
  return *model;
}

}  // namespace

CudaModelRunner::CudaModelRunner(std::shared_ptr<const CudaModel> model, const KvBlockPool& pool,
                                 CudaStream& stream)
    : model_(std::move(model)),
      state_{.model = checked(model_),
             .stream = stream,
             .cublas = CublasHandle(),
             .kv = CudaKvMemory(model_->config(), pool),
             .workspace = CudaWorkspace(),
             .placement = SharePlacement(),
             .multiprocessors = SharePlacement::multiprocessors(),
             .flash_slots = kernels::flash_slots(static_cast<int>(model_->config().head_dim),
                                                 SharePlacement::multiprocessors()),
             .cublas_workspace = DeviceBuffer(kCublasWorkspaceBytes),
             .graphs = LayerGraphs(),
             .use_graphs = switch_from_env("BATON_CUDA_GRAPHS"),
             .use_flash = switch_from_env("BATON_CUDA_FLASH"),
             .wide_pieces = switch_from_env("BATON_CUDA_WIDE_PIECES")} {}

std::shared_ptr<ModelStep> CudaModelRunner::begin(StepPlan plan, double device_share) {
  return std::make_shared<CudaModelStep>(state_, std::move(plan), device_share);
}

}  // namespace baton::cuda
