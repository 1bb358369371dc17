#include "baton/model/cuda/cuda_model_runner.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/common/env.h"
#include "baton/gpu/cuda/cuda_error.h"
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

BatchedProducts invariant_products_from_env() {
  const char* set = std::getenv("BATON_CUDA_INVARIANT_PRODUCTS");
  const std::string chosen = set != nullptr ? set : "decode_gemm";
  if (chosen == "cublas") return BatchedProducts::invariant_cublas;
  if (chosen == "decode_gemm") return BatchedProducts::invariant;
  throw std::invalid_argument("BATON_CUDA_INVARIANT_PRODUCTS: decode_gemm or cublas, not '" +
                              chosen + "'");
}

}  // namespace

CudaModelRunner::CudaModelRunner(std::shared_ptr<const CudaModel> model, const KvBlockPool& pool,
                                 CudaStream& stream)
    : model_(std::move(model)),
      pool_blocks_(pool.total_blocks()),
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
             .wide_pieces = switch_from_env("BATON_CUDA_WIDE_PIECES"),
             .paged_key_slots = switch_from_env("BATON_CUDA_PAGED_SLOTS"),
             .fused_norm = switch_from_env("BATON_CUDA_FUSED_NORM"),
             .fused_swiglu = switch_from_env("BATON_CUDA_FUSED_SWIGLU", false),
             .batched_products = switch_from_env("BATON_CUDA_DECODE_GEMM", false)
                                     ? BatchedProducts::decode_gemm
                                     : BatchedProducts::cublas,
             .invariant_products = invariant_products_from_env()} {}

std::shared_ptr<ModelStep> CudaModelRunner::begin(StepPlan plan, double device_share) {
  return std::make_shared<CudaModelStep>(state_, std::move(plan), device_share);
}

void CudaModelRunner::warm_up(int max_rows) {
  const int block_tokens = state_.kv.block_tokens();
  max_rows = std::min(max_rows, pool_blocks_ * block_tokens);
  KvSequence sequence;
  for (int b = 0; b * block_tokens < max_rows; ++b) sequence.blocks.push_back(b);
  std::vector<int> row_counts;
  for (int rows = 16; rows < max_rows; rows *= 2) row_counts.push_back(rows);
  if (max_rows > 0) row_counts.push_back(max_rows);
  for (const int rows : row_counts) {
    StepPlan plan{.sequences = {{.tokens = std::vector<TokenId>(static_cast<std::size_t>(rows), 0),
                                 .sequence = &sequence}},
                  .prefills = true};
    const std::shared_ptr<ModelStep> step = begin(std::move(plan), 1.0);
    for (const PartCut& cut : step->cut_layer()) {
      for (const int units : piece_sizes(cut)) step->run_piece(0, cut.part, 0, units);
    }
    // The next step's begin() rewrites the workspace this one's launches read.
    BATON_CUDA_CHECK(cudaStreamSynchronize(state_.stream.handle()));
  }
}

}  // namespace baton::cuda
