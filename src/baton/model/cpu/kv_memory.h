// KvMemory: the keys and values of a KvBlockPool's blocks, in host memory: block b of
// layer l holds block_tokens rows of kv_heads * head_dim floats each. The pool decides
// which block holds which positions (allocation, sharing, the prefix cache); this holds the
// numbers. Kept apart so that a device runner can keep the same blocks in its own memory.
// Thread-safety: none; the forward pass that reads and writes it runs one step at a time.
#pragma once

#include "baton/common/zeroed_pages.h"
#include "baton/model/runner/kv_block_pool.h"

namespace baton {

class KvMemory {
 public:
  KvMemory(const ModelConfig& config, int block_tokens, int blocks);
  // As many blocks as `pool` has.
  KvMemory(const ModelConfig& config, const KvBlockPool& pool)
      : KvMemory(config, pool.block_tokens(), pool.total_blocks()) {}

  int block_tokens() const { return block_tokens_; }
  int blocks() const { return blocks_; }
  float* keys(int layer, BlockId block) { return floats(keys_) + offset(layer, block); }
  float* values(int layer, BlockId block) { return floats(values_) + offset(layer, block); }
  const float* keys(int layer, BlockId block) const { return floats(keys_) + offset(layer, block); }
  const float* values(int layer, BlockId block) const {
    return floats(values_) + offset(layer, block);
  }

 private:
  static float* floats(const ZeroedPages& pages) { return static_cast<float*>(pages.data()); }
  std::size_t offset(int layer, BlockId block) const {
    return ((static_cast<std::size_t>(layer) * blocks_ + block) * block_tokens_) * row_floats_;
  }

  int block_tokens_;
  int blocks_;
  std::size_t row_floats_;  // kv_heads * head_dim
  ZeroedPages keys_;        // floats [layer][block][slot][row], zero until written
  ZeroedPages values_;      // same layout
};

}  // namespace baton
