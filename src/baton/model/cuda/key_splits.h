// How many key ranges a flash-attention launch splits a chunk's keys into, so that its
// blocks fill whole waves of the chip: a block per (query tile, KV head, key range), and
// the chip holds `slots` blocks at once. A launch of 128 blocks (a KV head of a 2048-row
// piece at head_dim 128) on 396 slots (132 multiprocessors x 3) runs at a third of the
// chip's rate whole; in 4 ranges it is 512 blocks, 1.29 waves, the second a third full
// (what the pieces cut by heads measured: 1.29x); in 3 ranges 384 blocks, 0.97 of a wave.
// And how many the paged decode kernel cuts each row's keys into (paged_key_splits).
// Pure; thread-safe.
#pragma once

#include <algorithm>

namespace baton::cuda {

// `blocks`: the launch's blocks unsplit; `max_splits`: the most ranges its keys allow.
// A launch of a wave or more is not split (its merges would cost more than the last
// wave's idle slots); otherwise the ranges that take the fewest waves per range of work,
// the fewest ranges among equals, at most two waves in all (the scratch is sized for that:
// key_split_blocks).
constexpr int key_splits(int blocks, int max_splits, int slots) {
  if (blocks <= 0 || slots <= 0 || blocks >= slots) return 1;
  int best = 1;
  double best_time = 1.0;  // waves / ranges: the time of one launch in whole-range waves
  for (int s = 2; s <= max_splits && blocks * s <= 2 * slots; ++s) {
    const int waves = (blocks * s + slots - 1) / slots;
    const double time = static_cast<double>(waves) / s;
    if (time < best_time - 1e-9) {
      best = s;
      best_time = time;
    }
  }
  return best;
}

// The most blocks a split launch has (key_splits keeps blocks x ranges within two waves).
constexpr int key_split_blocks(int slots) { return 2 * std::max(slots, 0); }

// How many ranges the paged decode kernel cuts each row's keys into: enough blocks (a
// block per row, KV head and range) for kPagedBlocksPerSm on each multiprocessor, ranges
// of at least kPagedMinSplitKeys of the longest row's keys, at most `max_splits`; rows
// shorter than kPagedSplitFromKeys stay whole. On the H100 (paged_attention_bench, sixth
// run) two blocks a multiprocessor beat four at every batch and length measured (batch 1,
// 8K keys: 24.7 us in 32 ranges, 34.1 in 64), and a 128-key row is faster whole (9.8 us)
// than in 8 ranges and their merge (11.2); between 128 and 1024 keys nothing is measured yet.
constexpr int kPagedBlocksPerSm = 2;
constexpr int kPagedMinSplitKeys = 16;
constexpr int kPagedSplitFromKeys = 256;
constexpr int paged_key_splits(int rows, int kv_heads, int longest, int multiprocessors,
                               int max_splits) {
  if (longest < kPagedSplitFromKeys) return 1;
  const int wanted =
      std::max(1, kPagedBlocksPerSm * multiprocessors / std::max(rows * kv_heads, 1));
  const int by_keys = (longest + kPagedMinSplitKeys - 1) / kPagedMinSplitKeys;
  return std::clamp(std::min(wanted, by_keys), 1, max_splits);
}

}  // namespace baton::cuda
