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

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/share_placement.h"
#include "baton/model/cuda/cuda_kv_memory.h"
#include "baton/model/cuda/cuda_model.h"
#include "baton/model/cuda/cuda_workspace.h"
#include "baton/model/cuda/layer_graphs.h"
#include "baton/model/model_runner.h"

namespace baton::cuda {

// What a step uses of its runner; the steps run one at a time.
struct RunnerState {
  const CudaModel& model;
  CudaStream& stream;
  CublasHandle cublas;
  CudaKvMemory kv;
  CudaWorkspace workspace;
  SharePlacement placement;
  int multiprocessors = 0;  // the device's, read once
  int flash_slots = 0;      // the flash kernel's blocks the device holds at once, read once
  // cuBLAS's workspace, ours so that captured products keep using it (cublasSetStream
  // would otherwise point them at the library's pool).
  DeviceBuffer cublas_workspace;
  LayerGraphs graphs;
  // BATON_CUDA_GRAPHS=0 launches every kernel directly; BATON_CUDA_FLASH=0 attends prefill
  // chunks through the cuBLAS products; BATON_CUDA_WIDE_PIECES=0 cuts prefill layers into
  // pieces of rows, not of columns and heads. All for comparisons.
  bool use_graphs = true;
  bool use_flash = true;
  bool wide_pieces = true;
};

class CudaModelRunner final : public ModelRunner {
 public:
  // std::invalid_argument for a model whose attention the kernels do not cover (a
  // head_dim above 256 or odd, more than 8 query heads per kv head).
  CudaModelRunner(std::shared_ptr<const CudaModel> model, const KvBlockPool& pool,
                  CudaStream& stream);
  std::shared_ptr<ModelStep> begin(StepPlan plan, double device_share) override;

 private:
  std::shared_ptr<const CudaModel> model_;
  RunnerState state_;
};

}  // namespace baton::cuda
