#include "baton/model/cpu/kv_memory.h"

#include <stdexcept>

namespace baton {

namespace {

std::size_t checked_bytes(const ModelConfig& config, int block_tokens, int blocks) {
  if (block_tokens < 1 || blocks < 1) {
    throw std::invalid_argument("KV memory needs at least one block of one token");
  }
  return static_cast<std::size_t>(config.num_layers) * blocks * block_tokens *
         static_cast<std::size_t>(config.num_kv_heads * config.head_dim) * sizeof(float);
}

}  // namespace

KvMemory::KvMemory(const ModelConfig& config, int block_tokens, int blocks)
    : block_tokens_(block_tokens),
      blocks_(blocks),
      row_floats_(static_cast<std::size_t>(config.num_kv_heads * config.head_dim)),
      keys_(checked_bytes(config, block_tokens, blocks)),
      values_(keys_.bytes()) {}

}  // namespace baton
