// Attention of few-token rows over their paged blocks, the key gather of a chunk, and the cuBLAS path's causal softmax and ungrouping (model_kernels.h).
#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/model_kernels.h"
#include "baton/model/cuda/paged_support.cuh"

namespace baton::cuda::kernels {
namespace {

using namespace detail;

// E elements per lane, consecutive (lane * E ...): one wide load per lane when 32 E ==
// head_dim, element by element (guarded) for smaller heads.
template <int E>
__device__ void load_head(const bf16* p, int lane, int d, float (&out)[E]) {
  const int first = lane * E;
  if (E >= 2 && first + E <= d) {
#pragma unroll
    for (int i = 0; i < E; i += 2) {
      const float2 pair =
          __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p + first + i));
      out[i] = pair.x;
      out[i + 1] = pair.y;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < E; ++i) out[i] = first + i < d ? __bfloat162float(p[first + i]) : 0.0f;
}

// One block of 4 warps per (listed row, kv head, split): each warp takes kKeysPerWarp
// keys at a time (their loads and dot products independent, so that they overlap) with an
// online softmax for every query head of the group; the warps' states are merged in
// shared memory. A row's keys are cut into row_splits equal ranges of its own length.
template <int E>
__global__ void __launch_bounds__(kAttentionWarps* kWarp)
    paged_attention_kernel(PagedAttention a, RowMap map, AttentionShape s) {
  __shared__ float warp_m[kAttentionWarps][kMaxGroup];
  __shared__ float warp_l[kAttentionWarps][kMaxGroup];
  __shared__ float warp_o[kAttentionWarps][kMaxGroup][kMaxHeadDim];
  let_next_kernel_start();  // a weight product after this one may begin its loads
  constexpr int U = kKeysPerWarp;
  const int item = blockIdx.x;
  const int g = blockIdx.y;
  const int split = blockIdx.z;
  const int r = a.row_list[item];
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  const int kv_dim = s.kv_heads * d;
  const int position = map.position[r];
  const int sequence = map.sequence[r];
  const int first = first_key(s, position);
  const int splits = row_splits(a, position + 1 - first);
  if (split >= splits) return;  // a range this row does not have (split_keys)
  const int split_len = (position + 1 - first + splits - 1) / splits;
  const int begin = first + split * split_len;
  const int end = min(position + 1, begin + split_len);
  const int warp = threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  const float scale = rsqrtf(static_cast<float>(d));

  float q[kMaxGroup][E];
  float o[kMaxGroup][E];
  float m[kMaxGroup];
  float l[kMaxGroup];
  const bf16* q_rows = a.q + (static_cast<std::size_t>(g) * a.rows + r) * group * d;
#pragma unroll
  for (int gi = 0; gi < kMaxGroup; ++gi) {
    m[gi] = -FLT_MAX;
    l[gi] = 0.0f;
#pragma unroll
    for (int i = 0; i < E; ++i) o[gi][i] = 0.0f;
    if (gi < group) {
      load_head<E>(q_rows + gi * d, lane, d, q[gi]);
#pragma unroll
      for (int i = 0; i < E; ++i) q[gi][i] *= scale;
    }
  }
  for (int j0 = begin + warp * U; j0 < end; j0 += kAttentionWarps * U) {
    float k[U][E];
    float v[U][E];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u;
      if (j < end) {
        const int block = map.block_table[sequence * map.max_blocks + j / map.block_tokens];
        const std::size_t base =
            (static_cast<std::size_t>(block) * map.block_tokens + j % map.block_tokens) * kv_dim +
            static_cast<std::size_t>(g) * d;
        load_head<E>(a.keys + base, lane, d, k[u]);
        load_head<E>(a.values + base, lane, d, v[u]);
      } else {
#pragma unroll
        for (int i = 0; i < E; ++i) k[u][i] = v[u][i] = 0.0f;
      }
    }
#pragma unroll
    for (int gi = 0; gi < kMaxGroup; ++gi) {
      if (gi >= group) break;
      float dot[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        dot[u] = 0.0f;
#pragma unroll
        for (int i = 0; i < E; ++i) dot[u] += q[gi][i] * k[u][i];
      }
      for (int offset = kWarp / 2; offset > 0; offset /= 2) {
#pragma unroll
        for (int u = 0; u < U; ++u) dot[u] += __shfl_xor_sync(0xffffffffu, dot[u], offset);
      }
      float m_new = m[gi];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (j0 + u < end) m_new = fmaxf(m_new, dot[u]);
      }
      const float correction = expf(m[gi] - m_new);
      l[gi] *= correction;
#pragma unroll
      for (int i = 0; i < E; ++i) o[gi][i] *= correction;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (j0 + u >= end) break;
        const float p = expf(dot[u] - m_new);
        l[gi] += p;
#pragma unroll
        for (int i = 0; i < E; ++i) o[gi][i] += p * v[u][i];
      }
      m[gi] = m_new;
    }
  }
#pragma unroll
  for (int gi = 0; gi < kMaxGroup; ++gi) {
    if (gi >= group) break;
    if (lane == 0) {
      warp_m[warp][gi] = m[gi];
      warp_l[warp][gi] = l[gi];
    }
#pragma unroll
    for (int i = 0; i < E; ++i) {
      if (lane * E + i < d) warp_o[warp][gi][lane * E + i] = o[gi][i];
    }
  }
  __syncthreads();
  merge_warps_and_store(warp_m, warp_l, warp_o, a, s, item, r, g, split, splits);
}

// One block per (listed row, kv head): every (split, query head)'s maximum and sum are read
// at once, one per thread, then each head's split weights are found (one thread per head),
// then every output element sums its splits. Few dependent loads: the merge is latency.
__global__ void combine_splits_kernel(PagedAttention a, RowMap map, AttentionShape s) {
  __shared__ float weight[kMaxSplits][kMaxGroup];
  __shared__ float sums[kMaxSplits][kMaxGroup];
  let_next_kernel_start();  // a weight product after this one may begin its loads
  const int item = blockIdx.x;
  const int g = blockIdx.y;
  const int r = a.row_list[item];
  const int position = map.position[r];
  const int splits = row_splits(a, position + 1 - first_key(s, position));
  if (splits == 1) return;  // its one range wrote the output itself
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  const std::size_t stride = static_cast<std::size_t>(group) * (d + 2);
  const float* parts =
      a.partial + (static_cast<std::size_t>(item) * s.kv_heads + g) * a.splits * stride;
  for (int e = threadIdx.x; e < splits * group; e += blockDim.x) {
    const int p = e / group;
    const int gi = e % group;
    const float* ml = parts + p * stride + group * d + 2 * gi;
    weight[p][gi] = ml[0];
    sums[p][gi] = ml[1];
  }
  __syncthreads();
  if (threadIdx.x < group) {
    const int gi = threadIdx.x;
    float best = -FLT_MAX;
    for (int p = 0; p < splits; ++p) {
      if (sums[p][gi] > 0.0f) best = fmaxf(best, weight[p][gi]);
    }
    float total = 0.0f;
    for (int p = 0; p < splits; ++p) {
      weight[p][gi] = sums[p][gi] > 0.0f ? expf(weight[p][gi] - best) : 0.0f;  // 0: empty
      total += sums[p][gi] * weight[p][gi];
    }
    const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
    for (int p = 0; p < splits; ++p) weight[p][gi] *= inverse;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) {
    const int gi = i / d;
    float value = 0.0f;
#pragma unroll 8
    for (int p = 0; p < splits; ++p) value += parts[p * stride + i] * weight[p][gi];
    const std::size_t out = (static_cast<std::size_t>(r) * s.heads + g * group) * d + i;
    a.out[out] = __float2bfloat16(value);
  }
}

__global__ void gather_kv_kernel(const bf16* keys, const bf16* values, RowMap map, int sequence,
                                 int first, int kv_dim, bf16* keys_out, bf16* values_out) {
  const int j = first + static_cast<int>(blockIdx.x);
  const int block = map.block_table[sequence * map.max_blocks + j / map.block_tokens];
  const std::size_t from =
      (static_cast<std::size_t>(block) * map.block_tokens + j % map.block_tokens) * kv_dim;
  const std::size_t to = static_cast<std::size_t>(j) * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) {
    keys_out[to + i] = keys[from + i];
    values_out[to + i] = values[from + i];
  }
}

__global__ void causal_softmax_kernel(const float* scores, int count, int group, int length,
                                      int start, int window, bf16* probabilities) {
  __shared__ float scratch[kWarp];
  const std::size_t row = blockIdx.x;
  const int t = static_cast<int>(row % (static_cast<std::size_t>(count) * group)) / group;
  const int position = start + t;
  const int first = window > 0 ? max(0, position - window + 1) : 0;
  const float* in = scores + row * length;
  bf16* out = probabilities + row * length;
  float best = -FLT_MAX;
  for (int j = first + threadIdx.x; j <= position; j += blockDim.x) best = fmaxf(best, in[j]);
  best = block_max(best, scratch);
  float total = 0.0f;
  for (int j = first + threadIdx.x; j <= position; j += blockDim.x) total += expf(in[j] - best);
  const float inverse = 1.0f / block_sum(total, scratch);
  for (int j = threadIdx.x; j < length; j += blockDim.x) {
    const bool seen = j >= first && j <= position;
    out[j] = __float2bfloat16(seen ? expf(in[j] - best) * inverse : 0.0f);
  }
}

__global__ void ungroup_kernel(const bf16* grouped, int kv_heads, int count, int group,
                               int head_dim, int first_row, bf16* out) {
  const long long total = static_cast<long long>(kv_heads) * count * group * head_dim;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int c = static_cast<int>(i % head_dim);
  const int gi = static_cast<int>((i / head_dim) % group);
  const int t = static_cast<int>((i / (static_cast<long long>(head_dim) * group)) % count);
  const int g = static_cast<int>(i / (static_cast<long long>(head_dim) * group * count));
  const int heads = kv_heads * group;
  out[(static_cast<std::size_t>(first_row + t) * heads + g * group + gi) * head_dim + c] =
      grouped[i];
}


template <int E>
void launch_paged(const PagedAttention& a, const RowMap& map, const AttentionShape& s,
                  cudaStream_t stream) {
  const dim3 grid(a.count, s.kv_heads, a.splits);
  paged_attention_kernel<E><<<grid, kAttentionWarps * kWarp, 0, stream>>>(a, map, s);
}

}  // namespace

cudaError_t paged_attention(const PagedAttention& a, const RowMap& map, const AttentionShape& shape,
                            cudaStream_t stream) {
  if (a.count == 0) return cudaSuccess;
  const int d = shape.head_dim;
  if (a.key_slots && paged_slots_fit(shape)) {
    launch_paged_slots(a, map, shape, stream);
  } else if (d <= 32) {
    launch_paged<1>(a, map, shape, stream);
  } else if (d <= 64) {
    launch_paged<2>(a, map, shape, stream);
  } else if (d <= 128) {
    launch_paged<4>(a, map, shape, stream);
  } else {
    launch_paged<8>(a, map, shape, stream);
  }
  if (a.splits > 1) {
    const int threads =
        std::min(1024, (shape.heads / shape.kv_heads * d + kWarp - 1) / kWarp * kWarp);
    combine_splits_kernel<<<dim3(a.count, shape.kv_heads), threads, 0, stream>>>(a, map, shape);
  }
  return cudaGetLastError();
}

cudaError_t gather_kv(const bf16* keys, const bf16* values, const RowMap& map, int sequence,
                      int first, int length, int kv_dim, bf16* keys_out, bf16* values_out,
                      cudaStream_t stream) {
  if (first >= length) return cudaSuccess;
  gather_kv_kernel<<<length - first, 128, 0, stream>>>(keys, values, map, sequence, first, kv_dim,
                                                       keys_out, values_out);
  return cudaGetLastError();
}

cudaError_t causal_softmax(const float* scores, int kv_heads, int count, int group, int length,
                           int start, int window, bf16* probabilities, cudaStream_t stream) {
  const long long rows = static_cast<long long>(kv_heads) * count * group;
  if (rows == 0) return cudaSuccess;
  causal_softmax_kernel<<<static_cast<unsigned>(rows), kNormThreads, 0, stream>>>(
      scores, count, group, length, start, window, probabilities);
  return cudaGetLastError();
}

cudaError_t ungroup(const bf16* grouped, int kv_heads, int count, int group, int head_dim,
                    int first_row, bf16* out, cudaStream_t stream) {
  const long long total = static_cast<long long>(kv_heads) * count * group * head_dim;
  if (total == 0) return cudaSuccess;
  ungroup_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(grouped, kv_heads, count, group,
                                                             head_dim, first_row, out);
  return cudaGetLastError();
}


}  // namespace baton::cuda::kernels
