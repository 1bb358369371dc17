#include "baton/model/kv_memory.h"

#include <stdexcept>

namespace baton {

KvMemory::KvMemory(const ModelConfig& config, int block_tokens, int blocks)
    : block_tokens_(block_tokens),
      blocks_(blocks),
      row_floats_(static_cast<std::size_t>(config.num_kv_heads * config.head_dim)) {
  if (block_tokens < 1 || blocks < 1) {
    throw std::invalid_argument("KV memory needs at least one block of one token");
  }
  const std::size_t floats =
      static_cast<std::size_t>(config.num_layers) * blocks_ * block_tokens_ * row_floats_;
  keys_.assign(floats, 0.0f);
  values_.assign(floats, 0.0f);
}

}  // namespace baton
