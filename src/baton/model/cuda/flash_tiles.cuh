// What both flash attention kernels share: the block's shape (warps of 16 query vectors, 4
// a block unless a kernel takes more; keys in tiles of 64) and where a block's queries and
// key tiles lie. Internal to
// flash_attention.cu and the kernels it includes.
// Thread-safety: device code and constants.
#pragma once

#include "baton/model/cuda/flash_attention.h"

namespace baton::cuda::kernels::flash {

constexpr int kWarp = 32;
constexpr int kWarps = 4;
constexpr int kTile = 64;  // keys per tile, and query vectors per block of kWarps
constexpr int kFragment = 16;

// The query vectors of a block of `warps` warps (grid x, heaviest tiles, the last
// positions, first) and of one of its warps over one KV head, with the keys they may see.
struct BlockQueries {
  int group = 1;       // query heads per KV head: vector i is row i / group
  int n = 0;           // query vectors of the chunk at this KV head
  int first = 0;       // the block's first vector
  int warp_first = 0;  // the warp's first vector
  int block_first_key = 0, block_last_key = 0;
  int warp_first_key = 0, warp_last_key = 0;

  __device__ BlockQueries(const FlashChunk& c, const AttentionShape& s, int warp,
                          int warps = kWarps)
      : group(s.heads / s.kv_heads), n(c.count * group) {
    const int vectors = warps * kFragment;
    first = (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * vectors;
    warp_first = first + warp * kFragment;
    block_last_key = c.start + (min(first + vectors, n) - 1) / group;
    block_first_key = first_key(c, s, first);
    warp_last_key = c.start + min(warp_first + kFragment - 1, n - 1) / group;
    warp_first_key = first_key(c, s, warp_first);
  }
  // The first key the vector `i` sees (its window's start).
  __device__ int first_key(const FlashChunk& c, const AttentionShape& s, int i) const {
    return s.window > 0 ? max(0, c.start + i / group - s.window + 1) : 0;
  }
  // This block's key tiles [begin, end): all the block's vectors may see unless the keys
  // are split (grid z), then its share of them.
  __device__ int2 key_tiles() const {
    const int tile_first = block_first_key / kTile;
    const int tiles = block_last_key / kTile - tile_first + 1;
    const int z = static_cast<int>(blockIdx.z);
    const int splits = static_cast<int>(gridDim.z);
    return make_int2(tile_first + tiles * z / splits, tile_first + tiles * (z + 1) / splits);
  }
  // False when the warp has no vector, or none of its vectors sees a key of tile [j0, j0 + kTile).
  __device__ bool warp_sees(int j0) const {
    return warp_first < n && j0 <= warp_last_key && j0 + kTile > warp_first_key;
  }
};

}  // namespace baton::cuda::kernels::flash
