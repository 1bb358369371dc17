// CudaModelRunner: runs the LLM engine's planned steps on a CUDA device, over a CudaModel
// and the scheduler's KV blocks in device memory. Each layer is one op on the engine's
// stream: RMSNorm, the fused q/k/v product, its epilogue (bias, q/k norm, RoPE, the store
// into the blocks), attention, the output product added onto the residual, RMSNorm, the
// fused gate/up product, SwiGLU and the down product added onto the residual.
//
// Attention: rows that bring few tokens (decode steps, short chunks) go through one paged
// kernel, split along the keys when the context is long; each longer prefill chunk
// gathers its sequence's keys and goes through flash_attention (tensor cores, no score
// matrix), or, for head sizes it is not built for, the scores and the weighted values as
// cuBLAS products with a causal softmax between. The device share (the partition policy)
// places each op's launches (share_placement.h). Steps without a long chunk replay each
// layer as a CUDA graph (layer_graphs.h). In pieces (ModelStep::cut_layer) a layer is cut
// along the products' output columns and attention's KV heads, so that every piece keeps
// all the step's rows: each weight and key is read once per layer, as whole.
//
// Thread-safety: as ModelRunner; the model and the stream outlive the runner.
#pragma once

#include <memory>

#include "baton/model/cuda/runner_state.h"
#include "baton/model/runner/model_runner.h"

namespace baton::cuda {

class CudaModelRunner final : public ModelRunner {
 public:
  // std::invalid_argument for a model whose attention the kernels do not cover (a
  // head_dim above 256 or odd, more than 8 query heads per kv head).
  CudaModelRunner(std::shared_ptr<const CudaModel> model, const KvBlockPool& pool,
                  CudaStream& stream);
  std::shared_ptr<ModelStep> begin(StepPlan plan, double device_share) override;
  // With wide pieces: one prompt chunk of each power of two of rows up to `max_rows` (and
  // `max_rows`), and in each, layer 0's every part at every piece size the sizer may pick
  // (the alignment times a power of two, and the whole part). It writes keys into the
  // pool's first blocks, which nothing holds before the first step.
  bool needs_warm_up() const override { return state_.wide_pieces; }
  void warm_up(int max_rows) override;
  // Products at 256 rows: a cuBLAS row's bits do not depend on its place at a fixed row
  // count (measured at 128-2048, bench/gemm_row_position). A short prompt alone pays for
  // 256 rows, not 2048; a long one's chunks of 256 read the weights 8 times as often
  // (what that costs is the GPU run's to measure).
  int invariant_prefill_rows() const override { return 256; }
  // Keys per range of a batch-invariant decode step's attention (RunnerState); tests make
  // it small, so that short rows take several ranges.
  void set_invariant_split_keys(int keys) { state_.invariant_split_keys = keys; }

 private:
  std::shared_ptr<const CudaModel> model_;
  int pool_blocks_;
  RunnerState state_;
};

}  // namespace baton::cuda
