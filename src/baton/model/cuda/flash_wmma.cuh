// flash_wmma_kernel: flash attention on WMMA fragments, the scores staged through shared
// memory; the kernel for head sizes flash_mma_kernel does not take (256: its registers
// would spill). Internal to flash_attention.cu, which launches it.
// Thread-safety: device code.
#pragma once

#include <mma.h>

#include <cfloat>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/flash_attention.h"
#include "baton/model/cuda/flash_tiles.cuh"

namespace baton::cuda::kernels::flash {

namespace wmma = nvcuda::wmma;

// The shared-memory layout of one block for head size D: bf16 tiles of keys and values
// (rows padded by 8 against bank conflicts), each warp's probabilities (bf16) and its f32
// scratch (the tile's scores, then each 16-column piece of its weighted values). The
// queries stay in registers, so that three blocks fit on a multiprocessor at D = 128.
template <int D>
struct WmmaLayout {
  static constexpr int ld = D + 8;
  static constexpr int p_ld = kTile + 8;
  static constexpr int s_ld = kTile + 4;
  static constexpr int tile_elements = kTile * ld;
  static constexpr int p_elements = kFragment * p_ld;  // per warp
  static constexpr std::size_t bytes =
      (2 * tile_elements + kWarps * p_elements) * sizeof(bf16) +
      static_cast<std::size_t>(kWarps) * kFragment * s_ld * sizeof(float);
};

// Copies `count` rows of D bf16 (row stride `stride`) into a tile; rows past `count` are
// zeros, so that masked keys multiply as zeros and not as whatever the memory held.
template <int D>
__device__ void load_tile_wmma(const bf16* from, std::size_t stride, int count, bf16* tile) {
  constexpr int per_row = D / 8;  // 16-byte pieces
  for (int e = threadIdx.x; e < kTile * per_row; e += blockDim.x) {
    const int row = e / per_row;
    const int col = (e % per_row) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row < count) v = *reinterpret_cast<const uint4*>(from + row * stride + col);
    *reinterpret_cast<uint4*>(tile + row * WmmaLayout<D>::ld + col) = v;
  }
}

// Grid: (query tiles, kv heads), heaviest tiles (the last positions) first. Each warp owns
// 16 query vectors; lane pair (2r, 2r + 1) owns vector r: each lane half of its keys in a
// tile, and columns [8h, 8h + 8) of every 16-column piece of its output.
template <int D>
__global__ void __launch_bounds__(kWarps* kWarp) flash_wmma_kernel(FlashChunk c, AttentionShape s) {
  using L = WmmaLayout<D>;
  detail::let_next_kernel_start();  // a weight product after this one may begin its loads
  using QFragment = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
  extern __shared__ __align__(128) unsigned char shared[];
  bf16* k_tile = reinterpret_cast<bf16*>(shared);
  bf16* v_tile = k_tile + L::tile_elements;
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  bf16* p_warp = v_tile + L::tile_elements + warp * L::p_elements;
  float* s_warp = reinterpret_cast<float*>(v_tile + L::tile_elements + kWarps * L::p_elements) +
                  warp * kFragment * L::s_ld;

  const int group = s.heads / s.kv_heads;
  const int g = c.first_kv_head + static_cast<int>(blockIdx.y);
  const int n = c.count * group;  // query vectors of this kv head
  const int i0 = (gridDim.x - 1 - blockIdx.x) * kTile;
  const int w0 = i0 + warp * kFragment;  // the warp's first query vector
  const std::size_t kv_stride = static_cast<std::size_t>(s.kv_heads) * D;
  const bf16* q_rows = c.q + (static_cast<std::size_t>(g) * c.rows + c.first_row) * group * D;
  // The warp's queries, through the key tile's memory (free until the first tile).
  load_tile_wmma<D>(q_rows + static_cast<std::size_t>(i0) * D, D, n - i0, k_tile);
  __syncthreads();
  QFragment q[D / kFragment];
#pragma unroll
  for (int kt = 0; kt < D / kFragment; ++kt) {
    wmma::load_matrix_sync(q[kt], k_tile + warp * kFragment * L::ld + kt * kFragment, L::ld);
  }

  const int r = lane / 2;
  const int half = lane % 2;
  const int i = w0 + r;
  const int position = i < n ? c.start + i / group : -1;  // -1: no vector, sees nothing
  const int first = s.window > 0 ? max(0, position - s.window + 1) : 0;
  const int block_last = c.start + (min(i0 + kTile, n) - 1) / group;
  const int block_first = s.window > 0 ? max(0, c.start + i0 / group - s.window + 1) : 0;
  const int warp_last = c.start + min(w0 + kFragment - 1, n - 1) / group;
  const int warp_first = s.window > 0 ? max(0, c.start + w0 / group - s.window + 1) : 0;
  const float scale = rsqrtf(static_cast<float>(D));

  float o[D / 2];
#pragma unroll
  for (int x = 0; x < D / 2; ++x) o[x] = 0.0f;
  float m = -FLT_MAX;
  float l = 0.0f;
  // This block's share of the key tiles (all of them unless the keys are split).
  const int tile_first = block_first / kTile;
  const int tiles = block_last / kTile - tile_first + 1;
  const int tile_begin = tile_first + tiles * static_cast<int>(blockIdx.z) / gridDim.z;
  const int tile_end = tile_first + tiles * static_cast<int>(blockIdx.z + 1) / gridDim.z;
  for (int j0 = tile_begin * kTile; j0 < tile_end * kTile; j0 += kTile) {
    __syncthreads();  // every warp is done with the previous tile (and the queries)
    const bf16* keys = c.keys + static_cast<std::size_t>(j0) * kv_stride + g * D;
    const bf16* values = c.values + static_cast<std::size_t>(j0) * kv_stride + g * D;
    load_tile_wmma<D>(keys, kv_stride, block_last + 1 - j0, k_tile);
    load_tile_wmma<D>(values, kv_stride, block_last + 1 - j0, v_tile);
    __syncthreads();
    if (w0 >= n || j0 > warp_last || j0 + kTile <= warp_first) continue;

#pragma unroll
    for (int nt = 0; nt < kTile / kFragment; ++nt) {  // scores = q k^T
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int kt = 0; kt < D / kFragment; ++kt) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b;
        wmma::load_matrix_sync(b, k_tile + nt * kFragment * L::ld + kt * kFragment, L::ld);
        wmma::mma_sync(acc, q[kt], b, acc);
      }
      wmma::store_matrix_sync(s_warp + nt * kFragment, acc, L::s_ld, wmma::mem_row_major);
    }
    __syncwarp();

    const float* scores = s_warp + r * L::s_ld + half * (kTile / 2);
    float tile_max = -FLT_MAX;
#pragma unroll 8
    for (int x = 0; x < kTile / 2; ++x) {
      const int j = j0 + half * (kTile / 2) + x;
      if (j >= first && j <= position) tile_max = fmaxf(tile_max, scores[x] * scale);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float correction = expf(m - m_new);
    l *= correction;
    bf16* probabilities = p_warp + r * L::p_ld + half * (kTile / 2);
#pragma unroll 8
    for (int x = 0; x < kTile / 2; ++x) {
      const int j = j0 + half * (kTile / 2) + x;
      const bf16 p =
          __float2bfloat16(j >= first && j <= position ? expf(scores[x] * scale - m_new) : 0.0f);
      probabilities[x] = p;
      l += __bfloat162float(p);  // the sum of what the product below weighs with
    }
    m = m_new;
    __syncwarp();

    for (int nt = 0; nt < D / kFragment; ++nt) {  // this tile's p v, 16 columns at a time
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int kt = 0; kt < kTile / kFragment; ++kt) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> b;
        wmma::load_matrix_sync(a, p_warp + kt * kFragment, L::p_ld);
        wmma::load_matrix_sync(b, v_tile + kt * kFragment * L::ld + nt * kFragment, L::ld);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(s_warp, acc, L::s_ld, wmma::mem_row_major);
      __syncwarp();
      const float* weighted = s_warp + r * L::s_ld + half * 8;
#pragma unroll
      for (int x = 0; x < 8; ++x) o[nt * 8 + x] = o[nt * 8 + x] * correction + weighted[x];
      __syncwarp();  // the next piece (or tile) overwrites the scratch
    }
  }

  const float total = l + __shfl_xor_sync(0xffffffffu, l, 1);
  if (i >= n) return;
  if (gridDim.z > 1) {  // unnormalised, with the running max and sum, for the merge
    float* part =
        c.partial +
        ((static_cast<std::size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * n + i) * (D + 2);
#pragma unroll
    for (int nt = 0; nt < D / kFragment; ++nt) {
#pragma unroll
      for (int x = 0; x < 8; ++x) part[nt * kFragment + half * 8 + x] = o[nt * 8 + x];
    }
    if (half == 0) {
      part[D] = m;
      part[D + 1] = total;
    }
    return;
  }
  const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
  const int t = i / group;
  bf16* out = c.out +
              (static_cast<std::size_t>(c.first_row + t) * s.heads + g * group + i % group) * D +
              half * 8;
#pragma unroll
  for (int nt = 0; nt < D / kFragment; ++nt) {
#pragma unroll
    for (int x = 0; x < 8; x += 2) {
      *reinterpret_cast<__nv_bfloat162*>(out + nt * kFragment + x) =
          __floats2bfloat162_rn(o[nt * 8 + x] * inverse, o[nt * 8 + x + 1] * inverse);
    }
  }
}

}  // namespace baton::cuda::kernels::flash
