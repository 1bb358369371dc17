#include <mma.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "baton/model/cuda/flash_attention.h"
#include "baton/model/cuda/key_splits.h"

namespace baton::cuda::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarp = 32;
constexpr int kWarps = 4;
constexpr int kTile = 64;  // query vectors per block (16 per warp) and keys per tile
constexpr int kFragment = 16;

// The shared-memory layout of one block for head size D: bf16 tiles of keys and values
// (rows padded by 8 against bank conflicts), each warp's probabilities (bf16) and its f32
// scratch (the tile's scores, then each 16-column piece of its weighted values). The
// queries stay in registers, so that three blocks fit on a multiprocessor at D = 128.
template <int D>
struct Layout {
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
__device__ void load_tile(const bf16* from, std::size_t stride, int count, bf16* tile) {
  constexpr int per_row = D / 8;  // 16-byte pieces
  for (int e = threadIdx.x; e < kTile * per_row; e += blockDim.x) {
    const int row = e / per_row;
    const int col = (e % per_row) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row < count) v = *reinterpret_cast<const uint4*>(from + row * stride + col);
    *reinterpret_cast<uint4*>(tile + row * Layout<D>::ld + col) = v;
  }
}

// Grid: (query tiles, kv heads), heaviest tiles (the last positions) first. Each warp owns
// 16 query vectors; lane pair (2r, 2r + 1) owns vector r: each lane half of its keys in a
// tile, and columns [8h, 8h + 8) of every 16-column piece of its output.
template <int D>
__global__ void __launch_bounds__(kWarps* kWarp) flash_kernel(FlashChunk c, AttentionShape s) {
  using L = Layout<D>;
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
  load_tile<D>(q_rows + static_cast<std::size_t>(i0) * D, D, n - i0, k_tile);
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
    load_tile<D>(keys, kv_stride, block_last + 1 - j0, k_tile);
    load_tile<D>(values, kv_stride, block_last + 1 - j0, v_tile);
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

// One thread per output element: combines the splits' partial results of each query
// vector (rescaled to the largest running max) and writes it as flash_kernel would.
__global__ void flash_merge_kernel(FlashChunk c, AttentionShape s) {
  const int d = s.head_dim;
  const int group = s.heads / s.kv_heads;
  const int n = c.count * group;
  const int g = c.first_kv_head + static_cast<int>(blockIdx.y);
  const int i = blockIdx.x * (blockDim.x / d) + threadIdx.x / d;
  const int column = threadIdx.x % d;
  if (i >= n) return;
  const std::size_t split_stride = static_cast<std::size_t>(gridDim.y) * n * (d + 2);
  const float* first = c.partial + (static_cast<std::size_t>(blockIdx.y) * n + i) * (d + 2);
  float m = -FLT_MAX;
  for (int k = 0; k < c.splits; ++k) {
    const float* part = first + k * split_stride;
    if (part[d + 1] > 0.0f) m = fmaxf(m, part[d]);
  }
  float total = 0.0f;
  float sum = 0.0f;
  for (int k = 0; k < c.splits; ++k) {
    const float* part = first + k * split_stride;
    if (part[d + 1] <= 0.0f) continue;  // a range past (or before) every key it may see
    const float weight = expf(part[d] - m);
    total += part[d + 1] * weight;
    sum += part[column] * weight;
  }
  const int t = i / group;
  c.out[(static_cast<std::size_t>(c.first_row + t) * s.heads + g * group + i % group) * d +
        column] = __float2bfloat16(total > 0.0f ? sum / total : 0.0f);
}

constexpr int kMergeThreads = 256;

// `with(std::integral_constant<int, D>{})` for the head sizes the kernel is built for,
// `otherwise` for any other: the one list of them.
template <typename R, typename F>
R for_head_dim(int head_dim, R otherwise, F&& with) {
  switch (head_dim) {
    case 16:
      return with(std::integral_constant<int, 16>{});
    case 32:
      return with(std::integral_constant<int, 32>{});
    case 64:
      return with(std::integral_constant<int, 64>{});
    case 128:
      return with(std::integral_constant<int, 128>{});
    case 256:
      return with(std::integral_constant<int, 256>{});
    default:
      return otherwise;
  }
}

// Lets flash_kernel<D> take its shared memory (over the default 48 KB at large D).
template <int D>
cudaError_t allow_shared_memory() {
  return cudaFuncSetAttribute(flash_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(Layout<D>::bytes));
}

template <int D>
cudaError_t launch(const FlashChunk& c, const AttentionShape& s, cudaStream_t stream) {
  constexpr std::size_t bytes = Layout<D>::bytes;
  const cudaError_t status = allow_shared_memory<D>();
  if (status != cudaSuccess) return status;
  const int vectors = c.count * (s.heads / s.kv_heads);
  const int heads = c.kv_head_count;
  const dim3 grid((vectors + kTile - 1) / kTile, heads, c.splits);
  flash_kernel<D><<<grid, kWarps * kWarp, bytes, stream>>>(c, s);
  if (c.splits == 1) return cudaGetLastError();
  constexpr int per_block = kMergeThreads / D;
  const dim3 merge_grid((vectors + per_block - 1) / per_block, heads);
  flash_merge_kernel<<<merge_grid, per_block * D, 0, stream>>>(c, s);
  return cudaGetLastError();
}

template <int D>
int resident_blocks() {
  if (allow_shared_memory<D>() != cudaSuccess) return 0;
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, flash_kernel<D>, kWarps * kWarp,
                                                    Layout<D>::bytes) != cudaSuccess) {
    return 0;
  }
  return blocks;
}

}  // namespace

int flash_slots(int head_dim, int multiprocessors) {
  return multiprocessors *
         for_head_dim(head_dim, 0, [](auto d) { return resident_blocks<decltype(d)::value>(); });
}

bool flash_fits(int head_dim) {
  return for_head_dim(head_dim, false, [](auto) { return true; });
}

int flash_splits(int count, int length, const AttentionShape& shape, int slots, int kv_head_count) {
  const int heads = kv_head_count > 0 ? kv_head_count : shape.kv_heads;
  const int blocks = (count * (shape.heads / shape.kv_heads) + kTile - 1) / kTile * heads;
  const int tiles = (length + kTile - 1) / kTile;
  const int max_splits = std::min(tiles / kFlashMinSplitTiles, kFlashMaxSplits);
  return key_splits(blocks, max_splits, slots);
}

std::size_t flash_partial_floats(int slots, int head_dim) {
  // A split launch has at most key_split_blocks(slots) blocks of kTile vectors each.
  return static_cast<std::size_t>(key_split_blocks(slots)) * kTile * (head_dim + 2);
}

cudaError_t flash_attention(const FlashChunk& chunk, const AttentionShape& shape,
                            cudaStream_t stream) {
  FlashChunk c = chunk;
  if (c.kv_head_count == 0) c.kv_head_count = shape.kv_heads - c.first_kv_head;
  if (c.count == 0 || c.kv_head_count == 0) return cudaSuccess;
  if (c.splits < 1 || c.splits > kFlashMaxSplits || (c.splits > 1 && c.partial == nullptr) ||
      c.first_kv_head < 0 || c.kv_head_count < 0 ||
      c.first_kv_head + c.kv_head_count > shape.kv_heads) {
    return cudaErrorInvalidValue;
  }
  return for_head_dim(shape.head_dim, cudaErrorInvalidValue,
                      [&](auto d) { return launch<decltype(d)::value>(c, shape, stream); });
}

}  // namespace baton::cuda::kernels
