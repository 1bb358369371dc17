#include "baton/model/runner/kv_block_pool.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace baton {

KvBlockPool::KvBlockPool(const ModelConfig& config, int block_tokens, std::size_t budget_bytes,
                         std::size_t value_bytes)
    : block_tokens_(block_tokens), total_blocks_(0) {
  if (block_tokens < 1) throw std::invalid_argument("a KV block needs at least one token");
  const std::size_t per_block = block_bytes(config, block_tokens, value_bytes);
  total_blocks_ = static_cast<int>(std::min<std::size_t>(budget_bytes / per_block, 1u << 30));
  if (total_blocks_ < 1) {
    throw std::invalid_argument("a KV budget of " + std::to_string(budget_bytes) +
                                " bytes holds no block of " + std::to_string(per_block) + " bytes");
  }
  blocks_.resize(static_cast<std::size_t>(total_blocks_));
  free_.reserve(blocks_.size());
  for (BlockId b = total_blocks_ - 1; b >= 0; --b) free_.push_back(b);
}

std::size_t KvBlockPool::block_bytes(const ModelConfig& config, int block_tokens,
                                     std::size_t value_bytes) {
  return 2 * value_bytes * static_cast<std::size_t>(config.num_layers) *
         static_cast<std::size_t>(block_tokens) *
         static_cast<std::size_t>(config.num_kv_heads * config.head_dim);
}

int KvBlockPool::available_blocks() const { return static_cast<int>(free_.size() + lru_.size()); }

std::optional<BlockId> KvBlockPool::allocate() {
  BlockId block;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    block = lru_.front();
    lru_.pop_front();
    forget(block);
  } else {
    return std::nullopt;
  }
  blocks_[block].references = 1;
  return block;
}

void KvBlockPool::retain(BlockId block) {
  BlockState& state = blocks_.at(block);
  if (state.references == 0) {
    if (!state.published) throw std::logic_error("retain of a free KV block");
    lru_.erase(state.lru_position);
  }
  ++state.references;
}

void KvBlockPool::release(BlockId block) {
  BlockState& state = blocks_.at(block);
  if (state.references <= 0) throw std::logic_error("release of a free KV block");
  if (--state.references > 0) return;
  if (state.published) {
    state.lru_position = lru_.insert(lru_.end(), block);
  } else {
    free_.push_back(block);
  }
}

void KvBlockPool::release_all(KvSequence& sequence) {
  for (BlockId block : sequence.blocks) release(block);
  sequence.blocks.clear();
  sequence.length = 0;
}

std::uint64_t KvBlockPool::chain_hash(std::uint64_t parent, std::span<const TokenId> tokens) {
  // FNV-1a over the parent hash and the token ids, then a final mix (splitmix64).
  std::uint64_t h = 0xcbf29ce484222325ull ^ parent;
  for (TokenId token : tokens) {
    h = (h ^ static_cast<std::uint32_t>(token)) * 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

std::uint64_t KvBlockPool::publish(BlockId block, std::uint64_t parent,
                                   std::span<const TokenId> tokens) {
  const std::uint64_t hash = chain_hash(parent, tokens);
  BlockState& state = blocks_.at(block);
  if (state.published || published_.contains(hash)) return hash;
  state.published =
      Published{.hash = hash, .parent = parent, .tokens = {tokens.begin(), tokens.end()}};
  published_.emplace(hash, block);
  return hash;
}

std::optional<BlockId> KvBlockPool::find_cached(std::uint64_t parent,
                                                std::span<const TokenId> tokens) {
  const auto it = published_.find(chain_hash(parent, tokens));
  if (it == published_.end()) return std::nullopt;
  const Published& entry = *blocks_[it->second].published;
  if (entry.parent != parent ||
      !std::equal(tokens.begin(), tokens.end(), entry.tokens.begin(), entry.tokens.end())) {
    return std::nullopt;
  }
  retain(it->second);
  return it->second;
}

void KvBlockPool::forget(BlockId block) {
  BlockState& state = blocks_[block];
  if (state.published) published_.erase(state.published->hash);
  state.published.reset();
}

}  // namespace baton
