// flash_mma_kernel: flash attention with every product on mma.m16n8k16 and the scores in
// registers (FlashAttention-2's scheme). Key and value tiles come through cp.async in two
// stages, the next tile in flight while this one is multiplied; ldmatrix feeds the
// fragments (values transposed on the way); a tile's probabilities, rounded to bf16, are
// already the A fragments of its values' product, so nothing goes back to shared memory.
// W warps a block (4 or 8): 8 share each key and value tile between twice the queries, half
// the reads from L2 a query. Internal to flash_attention.cu, which launches it.
// Thread-safety: device code.
#pragma once

#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/flash_attention.h"
#include "baton/model/cuda/flash_tiles.cuh"
#include "baton/model/cuda/tensor_core.cuh"

namespace baton::cuda::kernels::flash {

// Shared memory: two stages of a key tile and a value tile, rows padded by 8 bf16 (16
// bytes) so that the 8 rows of an ldmatrix fall on different banks. The queries (up to 128
// rows) pass through the second stage's key and value tiles before the first tile is
// multiplied.
template <int D>
struct MmaLayout {
  static constexpr int ld = D + 8;
  static constexpr int tile_elements = kTile * ld;
  static constexpr std::size_t bytes = 4 * tile_elements * sizeof(bf16);
};

// Starts copying `count` rows of D bf16 (row stride `stride`) into a tile; rows past
// `count` become zeros, so that a masked value multiplies as zero and not as stale memory.
template <int D, int W>
__device__ void copy_tile_async(const bf16* from, std::size_t stride, int count, bf16* tile,
                                int rows = kTile) {
  constexpr int per_row = D / 8;  // 16-byte pieces
  for (int e = static_cast<int>(threadIdx.x); e < rows * per_row; e += W * kWarp) {
    const int row = e / per_row;
    const int col = (e % per_row) * 8;
    const bool valid = row < count;
    detail::copy_async_16(tile + row * MmaLayout<D>::ld + col,
                          from + (valid ? row * stride + col : 0), valid);
  }
}

// This lane's two query rows of the warp (g and g + 8): their positions and first keys.
struct LaneRows {
  int position[2];  // -1: no vector there, it sees nothing
  int first[2];
};

// scores[nt] (keys 8 nt .. 8 nt + 7 of the tile at j0) scaled to log2 units and masked;
// returns each row's largest.
template <int N>
__device__ float2 scale_and_mask(float (&scores)[N][4], float scale, int j0, bool unmasked,
                                 const LaneRows& rows) {
  const int t = static_cast<int>(threadIdx.x) % 4;
  float2 best = make_float2(-INFINITY, -INFINITY);
#pragma unroll
  for (int nt = 0; nt < N; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int h = e / 2;
      const int j = j0 + 8 * nt + 2 * t + e % 2;
      float v = scores[nt][e] * scale;
      if (!unmasked && (j < rows.first[h] || j > rows.position[h])) v = -INFINITY;
      scores[nt][e] = v;
      if (h == 0)
        best.x = fmaxf(best.x, v);
      else
        best.y = fmaxf(best.y, v);
    }
  }
  // A row's scores are spread over the 4 lanes of its quad.
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    best.x = fmaxf(best.x, __shfl_xor_sync(0xffffffffu, best.x, offset));
    best.y = fmaxf(best.y, __shfl_xor_sync(0xffffffffu, best.y, offset));
  }
  return best;
}

// Grid: (query tiles, kv heads, key splits). Warp w owns query vectors 16 w .. 16 w + 15
// of the block; lane 4 g + t holds rows g and g + 8 of them (columns 2t, 2t + 1 of every
// 8-column piece of scores and output).
template <int D, int W>
__global__ void __launch_bounds__(W* kWarp) flash_mma_kernel(FlashChunk c, AttentionShape s) {
  using L = MmaLayout<D>;
  detail::let_next_kernel_start();  // a weight product after this one may begin its loads
  constexpr int kKeySteps = D / 16;  // 16-column pieces of a query
  constexpr int kScoreTiles = kTile / 8;
  constexpr int kOutTiles = D / 8;
  extern __shared__ __align__(128) unsigned char shared[];
  bf16* stages = reinterpret_cast<bf16*>(shared);  // stage k: keys at 2k, values at 2k + 1
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int g = lane / 4;
  const int t = lane % 4;
  const BlockQueries b(c, s, warp, W);
  const int kv_head = c.first_kv_head + static_cast<int>(blockIdx.y);
  const std::size_t kv_stride = static_cast<std::size_t>(s.kv_heads) * D;
  const bf16* keys = c.keys + kv_head * D;
  const bf16* values = c.values + kv_head * D;
  const int2 tiles = b.key_tiles();

  const bf16* q_rows =
      c.q + (static_cast<std::size_t>(kv_head) * c.rows + c.first_row) * b.group * D;
  copy_tile_async<D, W>(q_rows + static_cast<std::size_t>(b.first) * D, D, b.n - b.first,
                        stages + 2 * L::tile_elements, W * kFragment);
  detail::copy_async_commit();
  if (tiles.x < tiles.y) {
    const std::size_t j0 = static_cast<std::size_t>(tiles.x) * kTile;
    const int count = b.block_last_key + 1 - tiles.x * kTile;
    copy_tile_async<D, W>(keys + j0 * kv_stride, kv_stride, count, stages);
    copy_tile_async<D, W>(values + j0 * kv_stride, kv_stride, count, stages + L::tile_elements);
  }
  detail::copy_async_commit();
  detail::copy_async_wait<1>();  // the queries
  __syncthreads();
  uint32_t q[kKeySteps][4];
  {
    const bf16* row = stages + 2 * L::tile_elements +
                      (warp * kFragment + lane % 8 + 8 * ((lane / 8) % 2)) * L::ld +
                      8 * (lane / 16);
#pragma unroll
    for (int kk = 0; kk < kKeySteps; ++kk) detail::load_matrices(q[kk], row + 16 * kk);
  }
  __syncthreads();  // the second stage is free for the next tile

  LaneRows rows;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = b.warp_first + g + 8 * h;
    rows.position[h] = i < b.n ? c.start + i / b.group : -1;
    rows.first[h] = b.first_key(c, s, i);
  }
  // The warp's last vector has the largest first key; its first vector the smallest position.
  const int warp_end = min(b.warp_first + kFragment, b.n);
  const int last_first_key = b.first_key(c, s, warp_end - 1);
  const int first_position = c.start + b.warp_first / b.group;
  const bool warp_full = b.warp_first + kFragment <= b.n;
  constexpr float kLog2e = 1.4426950408889634f;
  const float scale = rsqrtf(static_cast<float>(D)) * kLog2e;

  float o[kOutTiles][4];
#pragma unroll
  for (int dt = 0; dt < kOutTiles; ++dt) o[dt][0] = o[dt][1] = o[dt][2] = o[dt][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY};  // running maxima, log2 units
  float l[2] = {0.0f, 0.0f};            // this lane's share of the running sums
  for (int tile = tiles.x; tile < tiles.y; ++tile) {
    const int stage = (tile - tiles.x) % 2;
    if (tile + 1 < tiles.y) {  // the next tile into the other stage, while this one runs
      const std::size_t j1 = static_cast<std::size_t>(tile + 1) * kTile;
      const int count = b.block_last_key + 1 - (tile + 1) * kTile;
      bf16* next = stages + 2 * (1 - stage) * L::tile_elements;
      copy_tile_async<D, W>(keys + j1 * kv_stride, kv_stride, count, next);
      copy_tile_async<D, W>(values + j1 * kv_stride, kv_stride, count, next + L::tile_elements);
      detail::copy_async_commit();
      detail::copy_async_wait<1>();
    } else {
      detail::copy_async_wait<0>();
    }
    __syncthreads();
    const int j0 = tile * kTile;
    if (b.warp_sees(j0)) {
      const bf16* key_tile = stages + 2 * stage * L::tile_elements;
      const bf16* value_tile = key_tile + L::tile_elements;
      float scores[kScoreTiles][4];
#pragma unroll
      for (int nt = 0; nt < kScoreTiles; ++nt)
        scores[nt][0] = scores[nt][1] = scores[nt][2] = scores[nt][3] = 0.0f;
      const bf16* key_row = key_tile + (lane % 8 + 8 * (lane / 16)) * L::ld + 8 * ((lane / 8) % 2);
#pragma unroll
      for (int kk = 0; kk < kKeySteps; ++kk) {
#pragma unroll
        for (int np = 0; np < kScoreTiles / 2; ++np) {
          uint32_t k[4];
          detail::load_matrices(k, key_row + 16 * np * L::ld + 16 * kk);
          detail::mma_16x8x16(scores[2 * np], q[kk][0], q[kk][1], q[kk][2], q[kk][3], k[0], k[1]);
          detail::mma_16x8x16(scores[2 * np + 1], q[kk][0], q[kk][1], q[kk][2], q[kk][3], k[2],
                              k[3]);
        }
      }
      const bool unmasked = warp_full && j0 + kTile - 1 <= first_position && j0 >= last_first_key;
      const float2 best = scale_and_mask(scores, scale, j0, unmasked, rows);
      float base[2];
      float correction[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m_new = fmaxf(m[h], h == 0 ? best.x : best.y);
        base[h] = m_new == -INFINITY ? 0.0f : m_new;  // a row that has seen nothing yet
        correction[h] = exp2f(m[h] - base[h]);
        m[h] = m_new;
        l[h] *= correction[h];
      }
      // The probabilities as bf16: A fragments of the values' product, 16 keys each.
      uint32_t p[kTile / 16][4];
#pragma unroll
      for (int nt = 0; nt < kScoreTiles; ++nt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const __nv_bfloat162 pair = __floats2bfloat162_rn(exp2f(scores[nt][2 * h] - base[h]),
                                                            exp2f(scores[nt][2 * h + 1] - base[h]));
          l[h] += __low2float(pair) + __high2float(pair);  // what the product weighs with
          p[nt / 2][(nt % 2) * 2 + h] = *reinterpret_cast<const uint32_t*>(&pair);
        }
      }
#pragma unroll
      for (int dt = 0; dt < kOutTiles; ++dt) {
        o[dt][0] *= correction[0];
        o[dt][1] *= correction[0];
        o[dt][2] *= correction[1];
        o[dt][3] *= correction[1];
      }
      const bf16* value_row =
          value_tile + (lane % 8 + 8 * ((lane / 8) % 2)) * L::ld + 8 * (lane / 16);
#pragma unroll
      for (int kk = 0; kk < kTile / 16; ++kk) {
#pragma unroll
        for (int dp = 0; dp < D / 16; ++dp) {
          uint32_t v[4];
          detail::load_matrices_transposed(v, value_row + 16 * kk * L::ld + 16 * dp);
          detail::mma_16x8x16(o[2 * dp], p[kk][0], p[kk][1], p[kk][2], p[kk][3], v[0], v[1]);
          detail::mma_16x8x16(o[2 * dp + 1], p[kk][0], p[kk][1], p[kk][2], p[kk][3], v[2], v[3]);
        }
      }
    }
    __syncthreads();  // every warp is done with this stage before it is filled again
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
  }
  constexpr float kLn2 = 0.6931471805599453f;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = b.warp_first + g + 8 * h;
    if (i >= b.n) continue;
    if (gridDim.z > 1) {  // unnormalised, with the running max (natural units) and sum
      float* part =
          c.partial +
          ((static_cast<std::size_t>(blockIdx.z) * gridDim.y + blockIdx.y) * b.n + i) * (D + 2);
#pragma unroll
      for (int dt = 0; dt < kOutTiles; ++dt) {
        part[8 * dt + 2 * t] = o[dt][2 * h];
        part[8 * dt + 2 * t + 1] = o[dt][2 * h + 1];
      }
      if (t == 0) {
        part[D] = m[h] * kLn2;
        part[D + 1] = l[h];
      }
      continue;
    }
    const float inverse = l[h] > 0.0f ? 1.0f / l[h] : 0.0f;
    bf16* out = c.out +
                (static_cast<std::size_t>(c.first_row + i / b.group) * s.heads + kv_head * b.group +
                 i % b.group) *
                    D +
                2 * t;
#pragma unroll
    for (int dt = 0; dt < kOutTiles; ++dt) {
      *reinterpret_cast<__nv_bfloat162*>(out + 8 * dt) =
          __floats2bfloat162_rn(o[dt][2 * h] * inverse, o[dt][2 * h + 1] * inverse);
    }
  }
}

}  // namespace baton::cuda::kernels::flash
