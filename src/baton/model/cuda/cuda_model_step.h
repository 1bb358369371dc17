// CudaModelStep: one planned step of CudaModelRunner: the row map made on the host at
// begin (copied to the device by the first layer's op), the launches of each layer, and the
// output copied back to pinned memory by finish().
// Thread-safety: as ModelStep; set_device_share() only between ops (the engine thread
// calls it at yield points, where the stream's owner launches nothing).
#pragma once

#include <algorithm>
#include <atomic>
#include <vector>

#include "baton/model/cuda/runner_state.h"
#include "baton/model/runner/model_runner.h"

namespace baton::cuda {

class CudaModelStep final : public ModelStep {
 public:
  // std::out_of_range for a token outside the vocabulary, std::length_error when a
  // sequence's blocks cannot hold its new positions.
  CudaModelStep(RunnerState& state, StepPlan plan, double device_share);

  int layers() const override { return static_cast<int>(state_.model.layers().size()); }
  int rows() const override { return rows_; }
  std::vector<PartCut> cut_layer() const override;
  void run_piece(int index, LayerPart part, int first, int count) override;
  void run_layer(int index) override;
  void finish() override;
  StepResult take_output() override;
  void set_device_share(double share) override;

 private:
  // A sequence whose chunk goes through the cuBLAS attention.
  struct Chunk {
    int sequence = 0;
    int first_row = 0;
    int rows = 0;
    int start = 0;  // its length before this step
  };
  // The layer's widths, as the kernels take them.
  struct Dims {
    int hidden = 0;
    int q_dim = 0;
    int kv_dim = 0;
    int inner = 0;
    float eps = 0.0f;
  };
  Dims dims() const;
  void plan_rows();
  void size_workspace();
  // The stream to launch on, with the device share placed and cuBLAS's workspace set.
  cudaStream_t prepare();
  void normed_product(const Products& products, int first, int count, int product_rows,
                      const float* norm_weight, const DeviceMatrix& w, void* y,
                      cudaDataType_t y_type, cudaStream_t stream);
  // cuBLAS's workspace on this step's handle, or none (no split-K) until the next prepare().
  void use_cublas_workspace(bool use);
  // The row map's copy to the device and the embedding: the step's first launches.
  void embed(cudaStream_t stream);
  int units_of(LayerPart part) const;
  // Rows [first, first + count) of every part of a layer.
  void enqueue_layer(int index, int first, int count, cudaStream_t stream);
  // Units [first, first + count) of one part (not rows), over all the step's rows.
  void enqueue_part(int index, LayerPart part, int first, int count, cudaStream_t stream);
  void enqueue_qkv_epilogue(int index, int first, int count, cudaStream_t stream);
  bool uses_flash() const;  // prefill chunks through flash_attention
  // A decode step whose rows must not depend on each other (StepPlan::batch_invariant):
  // its products and key ranges are the same for a row at every batch.
  bool invariant_decode() const { return plan_.batch_invariant && !plan_.prefills; }
  // The rows a whole layer's products run at: the step's, padded to StepPlan::
  // invariant_rows (at a fixed row count a cuBLAS row's result does not depend on its
  // place: bench/gemm_row_position). The padding rows hold whatever they hold; a row of
  // a product depends on its own input row only.
  int product_rows() const { return std::max(rows_, plan_.invariant_rows); }
  BatchedProducts batched_products() const {
    return invariant_decode() ? state_.invariant_products : state_.batched_products;
  }
  // How this step's products run (cuda_linear.h); fp8 weights widen in Slot::widened.
  Products products() const;
  // Rows [first, first + count) over KV heads [first_head, first_head + heads) (heads 0:
  // all); the paged rows and the chunks' key gathers go with the first head.
  void attend(int layer, int first, int count, cudaStream_t stream, int first_head = 0,
              int heads = 0);
  void attend_chunk(int layer, const Chunk& chunk, cudaStream_t stream, int first_head, int heads);

  RunnerState& state_;
  StepPlan plan_;
  std::atomic<double> share_;
  int rows_ = 0;
  int max_blocks_ = 0;
  std::vector<int> meta_;  // tokens, positions, sequences, block table, paged rows, logit rows
  int paged_rows_ = 0;
  std::vector<int> paged_;  // the rows of the paged kernel, ascending (host copy)
  int splits_ = 1;
  bool graphed_ = false;  // each layer replayed as a CUDA graph
  std::vector<Chunk> chunks_;
  int longest_chunk_ = 0;
  int longest_length_ = 0;
  // What the keys and values slots hold: positions [0, length) of `sequence` at `layer`,
  // so that a layer's later pieces gather only the positions its earlier ones added.
  struct Gathered {
    int layer = -1;
    int sequence = -1;
    int length = 0;
  } gathered_;
  std::size_t output_floats_ = 0;
  kernels::RowMap map_;              // device pointers, valid once the workspace is sized
  const int* paged_list_ = nullptr;  // in the row map: the rows of the paged kernel
  const int* last_rows_ = nullptr;   // and each sequence's last row
};

}  // namespace baton::cuda
