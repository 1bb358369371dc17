// CudaKvMemory: the keys and values of a KvBlockPool's blocks in device memory, bf16: layer
// l's blocks are [block][slot][kv_head][head_dim]. The pool decides which block holds which
// positions; this holds the numbers, as KvMemory does on the CPU. The host makes the pool
// count 2 bytes a number on CUDA (make_runner.h), so the budget is what this allocates.
// Thread-safety: none; the steps that read and write it run one at a time.
#pragma once

#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/runner/kv_block_pool.h"

namespace baton::cuda {

class CudaKvMemory {
 public:
  CudaKvMemory(const ModelConfig& config, const KvBlockPool& pool)
      : block_tokens_(pool.block_tokens()),
        layer_elements_(static_cast<std::size_t>(pool.total_blocks()) * pool.block_tokens() *
                        static_cast<std::size_t>(config.num_kv_heads * config.head_dim)),
        keys_(layer_elements_ * config.num_layers * sizeof(kernels::bf16)),
        values_(layer_elements_ * config.num_layers * sizeof(kernels::bf16)) {}

  int block_tokens() const { return block_tokens_; }
  kernels::bf16* keys(int layer) const { return at(keys_, layer); }
  kernels::bf16* values(int layer) const { return at(values_, layer); }

 private:
  kernels::bf16* at(const DeviceBuffer& b, int layer) const {
    return static_cast<kernels::bf16*>(b.get()) + static_cast<std::size_t>(layer) * layer_elements_;
  }

  int block_tokens_;
  std::size_t layer_elements_;
  DeviceBuffer keys_;
  DeviceBuffer values_;
};

}  // namespace baton::cuda
