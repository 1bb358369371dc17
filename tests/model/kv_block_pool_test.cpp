// KvBlockPool: sizing by budget, reference counts, and the prefix cache's publish, lookup
// and least-recently-used reclaiming.
#include "baton/model/runner/kv_block_pool.h"

#include <gtest/gtest.h>

#include <vector>

#include "baton/model/cpu/kv_memory.h"

namespace baton {
namespace {

ModelConfig tiny_config() {
  ModelConfig c;
  c.num_layers = 2;
  c.num_kv_heads = 2;
  c.head_dim = 4;
  return c;
}

// 2 (k, v) x 4 bytes x 2 layers x 4 tokens x 8 floats per position.
constexpr std::size_t kBlockBytes = 2 * 4 * 2 * 4 * 8;

TEST(KvBlockPool, HoldsAsManyBlocksAsTheBudgetAllows) {
  EXPECT_EQ(KvBlockPool::block_bytes(tiny_config(), 4), kBlockBytes);
  KvBlockPool pool(tiny_config(), 4, kBlockBytes * 3 + kBlockBytes / 2);
  EXPECT_EQ(pool.total_blocks(), 3);
  EXPECT_EQ(pool.available_blocks(), 3);
  EXPECT_THROW(KvBlockPool(tiny_config(), 4, kBlockBytes - 1), std::invalid_argument);
  EXPECT_THROW(KvBlockPool(tiny_config(), 0, kBlockBytes), std::invalid_argument);
  // bf16 numbers (a GPU runner's): the same budget holds twice the blocks.
  EXPECT_EQ(KvBlockPool::block_bytes(tiny_config(), 4, 2), kBlockBytes / 2);
  EXPECT_EQ(KvBlockPool(tiny_config(), 4, kBlockBytes * 3 + kBlockBytes / 2, 2).total_blocks(), 7);
}

TEST(KvBlockPool, BlocksAreCountedAndDistinct) {
  KvBlockPool pool(tiny_config(), 4, kBlockBytes * 2);
  const BlockId a = *pool.allocate();
  const BlockId b = *pool.allocate();
  EXPECT_NE(a, b);
  EXPECT_FALSE(pool.allocate().has_value());
  KvMemory memory(tiny_config(), pool);
  EXPECT_EQ(memory.blocks(), 2);
  EXPECT_NE(memory.keys(1, a), memory.keys(1, b));
  EXPECT_NE(memory.keys(0, a), memory.keys(1, a));
  EXPECT_NE(memory.keys(1, a), memory.values(1, a));
  pool.retain(a);
  pool.release(a);
  EXPECT_EQ(pool.available_blocks(), 0);
  pool.release(a);
  EXPECT_EQ(pool.available_blocks(), 1);
  EXPECT_THROW(pool.release(a), std::logic_error);
  KvSequence sequence{.blocks = {b}, .length = 3};
  pool.release_all(sequence);
  EXPECT_TRUE(sequence.blocks.empty());
  EXPECT_EQ(pool.available_blocks(), 2);
}

TEST(KvBlockPool, APublishedBlockIsFoundAgainAfterItsHolderLeaves) {
  KvBlockPool pool(tiny_config(), 4, kBlockBytes * 3);
  const std::vector<TokenId> first{1, 2, 3, 4}, second{5, 6, 7, 8};
  const BlockId a = *pool.allocate();
  const BlockId b = *pool.allocate();
  const std::uint64_t h1 = pool.publish(a, KvBlockPool::kRootHash, first);
  EXPECT_EQ(h1, KvBlockPool::chain_hash(KvBlockPool::kRootHash, first));
  pool.publish(b, h1, second);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.cached_blocks(), 2);
  EXPECT_EQ(pool.available_blocks(), 3);

  EXPECT_FALSE(pool.find_cached(KvBlockPool::kRootHash, second).has_value());  // wrong parent
  EXPECT_FALSE(pool.find_cached(KvBlockPool::kRootHash, std::vector<TokenId>{1, 2, 3, 5}));
  EXPECT_EQ(pool.find_cached(KvBlockPool::kRootHash, first), a);
  EXPECT_EQ(pool.find_cached(h1, second), b);
  EXPECT_EQ(pool.cached_blocks(), 0);
  EXPECT_EQ(pool.available_blocks(), 1);
  // An equal block published again keeps the first one.
  const BlockId c = *pool.allocate();
  pool.publish(c, KvBlockPool::kRootHash, first);
  pool.release(c);
  EXPECT_EQ(pool.cached_blocks(), 0);
  EXPECT_EQ(pool.available_blocks(), 1);
}

TEST(KvBlockPool, CachedBlocksAreReclaimedOldestFirstOnlyWhenNothingIsFree) {
  KvBlockPool pool(tiny_config(), 4, kBlockBytes * 2);
  const std::vector<TokenId> old_tokens{1, 1, 1, 1}, new_tokens{2, 2, 2, 2};
  const BlockId a = *pool.allocate();
  const BlockId b = *pool.allocate();
  pool.publish(a, KvBlockPool::kRootHash, old_tokens);
  pool.publish(b, KvBlockPool::kRootHash, new_tokens);
  pool.release(a);  // released first: the older
  pool.release(b);
  const BlockId reused = *pool.allocate();
  EXPECT_EQ(reused, a);
  EXPECT_FALSE(pool.find_cached(KvBlockPool::kRootHash, old_tokens).has_value());
  EXPECT_EQ(pool.find_cached(KvBlockPool::kRootHash, new_tokens), b);
}

}  // namespace
}  // namespace baton
