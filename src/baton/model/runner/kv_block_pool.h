// KvBlockPool: the accounting of the keys and values of every running sequence of one
// model, in fixed-size blocks of `block_tokens` positions taken from a pool sized by a
// memory budget (paged attention). A sequence holds a table of block ids (KvSequence); blocks are
// reference counted, so sequences with a common prefix can share its blocks.
//
// The prefix cache lives here too. A full block can be published under the hash of its
// tokens and of every token before it (a chain hash). When its last holder releases it,
// a published block is not freed but kept as "cached": a later sequence whose prompt
// starts with the same tokens finds it and takes it back instead of computing it again.
// Cached blocks are reclaimed least recently used first, only when no plain free block
// is left. A lookup compares the block's tokens and its parent's hash, not only its own
// hash, so a 64-bit collision of one block alone cannot hand out wrong keys.
//
// The keys and values themselves are in KvMemory (kv_memory.h), which the runner owns.
//
// Thread-safety: none. One engine thread owns the pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "baton/model/config/model_config.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

using BlockId = std::int32_t;

// The KV blocks of one sequence: position p lives in blocks[p / block_tokens].
struct KvSequence {
  std::vector<BlockId> blocks;
  int length = 0;  // positions whose keys and values are written
};

class KvBlockPool {
 public:
  // As many blocks as fit in `budget_bytes`, each key and value number `value_bytes` wide
  // (4: f32 on the CPU; 2: bf16 on a GPU); std::invalid_argument when not even one does.
  KvBlockPool(const ModelConfig& config, int block_tokens, std::size_t budget_bytes,
              std::size_t value_bytes = sizeof(float));

  // Bytes of one block: keys and values of every layer.
  static std::size_t block_bytes(const ModelConfig& config, int block_tokens,
                                 std::size_t value_bytes = sizeof(float));

  int block_tokens() const { return block_tokens_; }
  int total_blocks() const { return total_blocks_; }
  // Blocks allocate() can hand out now: free ones and cached ones nobody holds.
  int available_blocks() const;
  // Published blocks nobody holds (kept for the prefix cache).
  int cached_blocks() const { return static_cast<int>(lru_.size()); }

  // A block for new keys (reference count 1), or none when every block is held.
  std::optional<BlockId> allocate();
  void retain(BlockId block);
  // Drops one reference; at zero the block becomes cached (if published) or free.
  void release(BlockId block);
  // Releases every block of `sequence` and empties it.
  void release_all(KvSequence& sequence);

  // The hash of a block holding `tokens` after a prefix whose chain hash is `parent`
  // (kRootHash for the first block).
  static std::uint64_t chain_hash(std::uint64_t parent, std::span<const TokenId> tokens);
  static constexpr std::uint64_t kRootHash = 0x9e3779b97f4a7c15ull;
  // Publishes the full block `block`, which holds `tokens` after the prefix `parent`.
  // Returns its chain hash. When an equal block is published already, this one is not.
  std::uint64_t publish(BlockId block, std::uint64_t parent, std::span<const TokenId> tokens);
  // The published block holding `tokens` after prefix `parent`, retained for the caller.
  std::optional<BlockId> find_cached(std::uint64_t parent, std::span<const TokenId> tokens);

 private:
  struct Published {
    std::uint64_t hash = 0;
    std::uint64_t parent = 0;
    std::vector<TokenId> tokens;
  };
  struct BlockState {
    int references = 0;
    std::optional<Published> published;
    std::list<BlockId>::iterator lru_position;  // valid while cached
  };

  void forget(BlockId block);

  int block_tokens_;
  int total_blocks_;
  std::vector<BlockState> blocks_;
  std::vector<BlockId> free_;                             // never published, unheld
  std::list<BlockId> lru_;                                // published, unheld; oldest first
  std::unordered_map<std::uint64_t, BlockId> published_;  // chain hash -> block
};

}  // namespace baton
