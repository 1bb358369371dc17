// Paged decode attention in key slots (PagedAttention::key_slots): a warp takes 32 / LK keys
// at once, LK lanes a key, each lane 16-byte loads of its D / LK dimensions of the key and
// the value, and keeps the next keys' loads in flight while it scores these. The warp-a-key
// kernel (attention_kernels.cu) reads KV at 630-806 GB/s on an H100 at most (its chain of
// dependent steps per 4 keys bounds it: docs/benchmarks.md); this one is written to keep
// the loads of the next 4-8 keys of each warp in flight (8 for the 8B shape's heads).
// Grid, ranges and partial layout are the other kernel's, so combine_splits_kernel merges
// either.
#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/cuda/paged_support.cuh"

namespace baton::cuda::kernels {
namespace {

using namespace detail;

// Lanes a key takes, so that a lane's output accumulators (G x D / LK floats) stay at most
// 64 registers.
template <int D, int G>
__host__ __device__ constexpr int lanes_per_key() {
  int lanes = 8;
  while (lanes < kWarp && G * D / lanes > 64) lanes *= 2;
  return lanes;
}

constexpr int kSlotKeys = 2;  // keys each slot takes an iteration

// The 16-byte pieces of one key's (or value's) dimensions a lane holds.
template <int C>
struct Piece {
  uint4 part[C];
};

// Key j's and value j's dimensions [offset, offset + 8 C) of KV head g; zeros past `end`.
template <int C>
__device__ void load_key(const PagedAttention& a, const RowMap& map, int sequence, int g, int d,
                         int kv_dim, int offset, int j, int end, Piece<C>& k, Piece<C>& v) {
  if (j >= end) {
#pragma unroll
    for (int c = 0; c < C; ++c) k.part[c] = v.part[c] = make_uint4(0, 0, 0, 0);
    return;
  }
  const int block = map.block_table[sequence * map.max_blocks + j / map.block_tokens];
  const std::size_t base =
      (static_cast<std::size_t>(block) * map.block_tokens + j % map.block_tokens) * kv_dim +
      static_cast<std::size_t>(g) * d + offset;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    k.part[c] = __ldg(reinterpret_cast<const uint4*>(a.keys + base) + c);
    v.part[c] = __ldg(reinterpret_cast<const uint4*>(a.values + base) + c);
  }
}

template <int C>
__device__ void widen(const Piece<C>& p, float (&out)[8 * C]) {
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&p.part[c]);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(pairs[i]);
      out[8 * c + 2 * i] = f.x;
      out[8 * c + 2 * i + 1] = f.y;
    }
  }
}

// One block of kAttentionWarps warps per (listed row, KV head, key range), as the other
// kernel. Within a warp, slot `lane / LK` scores its keys against the group's G query
// heads (read from shared memory) with an online softmax of its own; the slots of a warp
// merge by shuffles at the end, the warps in shared memory.
template <int D, int G>
__global__ void __launch_bounds__(kAttentionWarps* kWarp)
    paged_slots_kernel(PagedAttention a, RowMap map, AttentionShape s) {
  constexpr int LK = lanes_per_key<D, G>();
  constexpr int KS = kWarp / LK;  // keys a warp takes at once
  constexpr int DL = D / LK;      // dimensions a lane holds
  constexpr int C = DL / 8;       // its 16-byte loads a key
  constexpr int U = kSlotKeys;
  constexpr int kStep = kAttentionWarps * KS * U;  // keys a block takes an iteration
  static_assert(DL % 8 == 0, "a lane's dimensions are whole 16-byte loads");
  // A lane's dimensions padded by 4 floats, so that the 8 lanes of a quarter warp read
  // their 16-byte pieces from 8 different bank groups.
  __shared__ float queries[G][LK][DL + 4];
  __shared__ float warp_m[kAttentionWarps][G];
  __shared__ float warp_l[kAttentionWarps][G];
  __shared__ float warp_o[kAttentionWarps][G][D];
  let_next_kernel_start();  // a weight product after this one may begin its loads
  const int item = blockIdx.x;
  const int g = blockIdx.y;
  const int split = blockIdx.z;
  const int r = a.row_list[item];
  const int group = s.heads / s.kv_heads;  // at most G
  const int kv_dim = s.kv_heads * D;
  const int sequence = map.sequence[r];
  const KeyRange range = key_range(a, s, map.position[r], split);
  // A range this row does not have (split_keys) writes nothing; an empty one it has (more
  // ranges than keys) still stores its empty state, which the merge of ranges skips.
  if (split >= range.splits) return;
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const int slot = lane / LK;
  const int part = lane % LK;
  const int offset = part * DL;
  const float scale = rsqrtf(static_cast<float>(D));
  const bf16* q_rows = a.q + (static_cast<std::size_t>(g) * a.rows + r) * group * D;
  for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
    const int dim = i % D;
    queries[i / D][dim / DL][dim % DL] = i / D < group ? __bfloat162float(q_rows[i]) * scale : 0.0f;
  }
  __syncthreads();

  float m[G];
  float l[G];
  float o[G][DL];
#pragma unroll
  for (int gi = 0; gi < G; ++gi) {
    m[gi] = -FLT_MAX;
    l[gi] = 0.0f;
#pragma unroll
    for (int i = 0; i < DL; ++i) o[gi][i] = 0.0f;
  }
  // Key u of this slot in the iteration at j0.
  const auto key_of = [&](int j0, int u) { return j0 + (warp * U + u) * KS + slot; };
  Piece<C> keys[U], values[U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    load_key(a, map, sequence, g, D, kv_dim, offset, key_of(range.begin, u), range.end, keys[u],
             values[u]);
  }
  for (int j0 = range.begin; j0 < range.end; j0 += kStep) {
    Piece<C> next_keys[U], next_values[U];  // in flight while these are scored
#pragma unroll
    for (int u = 0; u < U; ++u) {
      load_key(a, map, sequence, g, D, kv_dim, offset, key_of(j0 + kStep, u), range.end,
               next_keys[u], next_values[u]);
    }
    float score[U][G];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float k[DL];
      widen(keys[u], k);
#pragma unroll
      for (int gi = 0; gi < G; ++gi) {
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < DL; ++i) dot += queries[gi][part][i] * k[i];
#pragma unroll
        for (int step = LK / 2; step > 0; step /= 2) {
          dot += __shfl_xor_sync(0xffffffffu, dot, step);
        }
        score[u][gi] = dot;
      }
    }
#pragma unroll
    for (int gi = 0; gi < G; ++gi) {
      float m_new = m[gi];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (key_of(j0, u) < range.end) m_new = fmaxf(m_new, score[u][gi]);
      }
      const float correction = expf(m[gi] - m_new);
      l[gi] *= correction;
#pragma unroll
      for (int i = 0; i < DL; ++i) o[gi][i] *= correction;
      m[gi] = m_new;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (key_of(j0, u) >= range.end) break;
      float v[DL];
      widen(values[u], v);
#pragma unroll
      for (int gi = 0; gi < G; ++gi) {
        const float p = expf(score[u][gi] - m[gi]);
        l[gi] += p;
#pragma unroll
        for (int i = 0; i < DL; ++i) o[gi][i] += p * v[i];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      keys[u] = next_keys[u];
      values[u] = next_values[u];
    }
  }
  // The warp's slots merged (a slot that saw no key has l 0 and weighs nothing).
#pragma unroll
  for (int step = LK; step < kWarp; step *= 2) {
#pragma unroll
    for (int gi = 0; gi < G; ++gi) {
      const float m_other = __shfl_xor_sync(0xffffffffu, m[gi], step);
      const float l_other = __shfl_xor_sync(0xffffffffu, l[gi], step);
      const float m_new = fmaxf(m[gi], m_other);
      const float mine = l[gi] > 0.0f ? expf(m[gi] - m_new) : 0.0f;
      const float theirs = l_other > 0.0f ? expf(m_other - m_new) : 0.0f;
      l[gi] = l[gi] * mine + l_other * theirs;
#pragma unroll
      for (int i = 0; i < DL; ++i) {
        o[gi][i] = o[gi][i] * mine + __shfl_xor_sync(0xffffffffu, o[gi][i], step) * theirs;
      }
      m[gi] = m_new;
    }
  }
  if (slot == 0) {
#pragma unroll
    for (int gi = 0; gi < G; ++gi) {
      if (lane == 0) {
        warp_m[warp][gi] = m[gi];
        warp_l[warp][gi] = l[gi];
      }
#pragma unroll
      for (int i = 0; i < DL; ++i) warp_o[warp][gi][offset + i] = o[gi][i];
    }
  }
  __syncthreads();
  merge_warps_and_store(warp_m, warp_l, warp_o, a, s, item, r, g, split, range.splits);
}

template <int D>
void launch_for_group(const PagedAttention& a, const RowMap& map, const AttentionShape& s,
                      cudaStream_t stream) {
  const dim3 grid(a.count, s.kv_heads, a.splits);
  const dim3 block(kAttentionWarps * kWarp);
  const int group = s.heads / s.kv_heads;
  if (group <= 2) {
    paged_slots_kernel<D, 2><<<grid, block, 0, stream>>>(a, map, s);
  } else if (group <= 4) {
    paged_slots_kernel<D, 4><<<grid, block, 0, stream>>>(a, map, s);
  } else {
    paged_slots_kernel<D, 8><<<grid, block, 0, stream>>>(a, map, s);
  }
}

}  // namespace

namespace detail {

bool paged_slots_fit(const AttentionShape& s) {
  return (s.head_dim == 64 || s.head_dim == 128 || s.head_dim == 256) &&
         s.heads / s.kv_heads <= kMaxGroup;
}

void launch_paged_slots(const PagedAttention& a, const RowMap& map, const AttentionShape& s,
                        cudaStream_t stream) {
  switch (s.head_dim) {
    case 64:
      return launch_for_group<64>(a, map, s, stream);
    case 128:
      return launch_for_group<128>(a, map, s, stream);
    default:
      return launch_for_group<256>(a, map, s, stream);
  }
}

}  // namespace detail
}  // namespace baton::cuda::kernels
