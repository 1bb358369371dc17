#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kNormThreads = 256;
constexpr int kAttentionWarps = 4;
constexpr int kKeysPerWarp = 4;

__device__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// Sum over the block (every thread gets it); `scratch` holds one float per warp.
__device__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  const int warps = (blockDim.x + kWarp - 1) / kWarp;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read from a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += scratch[w];
  return total;
}

__device__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp;
  const int warp = threadIdx.x / kWarp;
  const int warps = (blockDim.x + kWarp - 1) / kWarp;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float best = -FLT_MAX;
  for (int w = 0; w < warps; ++w) best = fmaxf(best, scratch[w]);
  return best;
}

int blocks_for(long long count, int threads) {
  return static_cast<int>((count + threads - 1) / threads);
}

__global__ void embed_kernel(const bf16* table, const int* tokens, int hidden, float* x) {
  const bf16* row = table + static_cast<std::size_t>(tokens[blockIdx.x]) * hidden;
  float* out = x + static_cast<std::size_t>(blockIdx.x) * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) out[i] = __bfloat162float(row[i]);
}

template <typename Out>
__device__ void store(Out* out, std::size_t i, float v);
template <>
__device__ void store<bf16>(bf16* out, std::size_t i, float v) {
  out[i] = __float2bfloat16(v);
}
template <>
__device__ void store<float>(float* out, std::size_t i, float v) {
  out[i] = v;
}

// One block per row; float4 loads when hidden is a multiple of 4 (every real model), so
// that one block moves a row at the speed of many: a decode step has one row to norm.
template <typename Out>
__global__ void rms_norm_kernel(const float* x, const int* rows_of, int hidden, const float* weight,
                                float eps, Out* out) {
  __shared__ float scratch[kWarp];
  const int source = rows_of != nullptr ? rows_of[blockIdx.x] : static_cast<int>(blockIdx.x);
  const float* row = x + static_cast<std::size_t>(source) * hidden;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * hidden;
  const bool wide = hidden % 4 == 0;
  float squares = 0.0f;
  if (wide) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    for (int i = threadIdx.x; i < hidden / 4; i += blockDim.x) {
      const float4 v = row4[i];
      squares += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
  } else {
    for (int i = threadIdx.x; i < hidden; i += blockDim.x) squares += row[i] * row[i];
  }
  const float inverse = rsqrtf(block_sum(squares, scratch) / static_cast<float>(hidden) + eps);
  if (wide) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    const auto* weight4 = reinterpret_cast<const float4*>(weight);
    for (int i = threadIdx.x; i < hidden / 4; i += blockDim.x) {
      const float4 v = row4[i];
      const float4 w = weight4[i];
      store(out, base + 4 * i, v.x * inverse * w.x);
      store(out, base + 4 * i + 1, v.y * inverse * w.y);
      store(out, base + 4 * i + 2, v.z * inverse * w.z);
      store(out, base + 4 * i + 3, v.w * inverse * w.w);
    }
    return;
  }
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    store(out, base + i, row[i] * inverse * weight[i]);
  }
}

int norm_threads(int hidden) {
  const int lanes = hidden % 4 == 0 ? hidden / 4 : hidden;
  return std::clamp((lanes + kWarp - 1) / kWarp * kWarp, kWarp, 1024);
}

// One block per (row, head of q, k or v); thread t holds elements t and t + head_dim / 2,
// the pair RoPE's "rotate half" layout rotates together.
__global__ void qkv_epilogue_kernel(QkvEpilogue e, RowMap map, AttentionShape s, int first,
                                    int rows) {
  __shared__ float scratch[kWarp];
  const int r = first + static_cast<int>(blockIdx.x);
  const int h = blockIdx.y;
  const int t = threadIdx.x;
  const int d = s.head_dim;
  const int half = d / 2;
  const int kv_dim = s.kv_heads * d;
  const int width = s.heads * d + 2 * kv_dim;
  const bool is_q = h < s.heads;
  const bool is_k = !is_q && h < s.heads + s.kv_heads;
  const int column = h * d;  // q heads, then k heads, then v heads
  const bool active = t < half;
  float a = 0.0f;
  float b = 0.0f;
  if (active) {
    a = e.qkv[static_cast<std::size_t>(r) * width + column + t];
    b = e.qkv[static_cast<std::size_t>(r) * width + column + t + half];
    if (e.bias != nullptr) {
      a += e.bias[column + t];
      b += e.bias[column + t + half];
    }
  }
  const int position = map.position[r];
  if (is_q || is_k) {
    const float* norm = is_q ? e.q_norm : e.k_norm;
    if (norm != nullptr) {
      const float inverse =
          rsqrtf(block_sum(a * a + b * b, scratch) / static_cast<float>(d) + e.eps);
      if (active) {
        a = a * inverse * norm[t];
        b = b * inverse * norm[t + half];
      }
    }
    if (active) {
      float sine;
      float cosine;
      sincosf(static_cast<float>(position) * e.inverse_frequencies[t], &sine, &cosine);
      const float ra = a * cosine - b * sine;
      const float rb = b * cosine + a * sine;
      a = ra;
      b = rb;
    }
  }
  if (!active) return;
  if (is_q) {
    const int group = s.heads / s.kv_heads;
    const int g = h / group;
    const std::size_t base = ((static_cast<std::size_t>(g) * rows + r) * group + h % group) * d;
    e.q_out[base + t] = __float2bfloat16(a);
    e.q_out[base + t + half] = __float2bfloat16(b);
    return;
  }
  const int kv_head = is_k ? h - s.heads : h - s.heads - s.kv_heads;
  const int block = map.block_table[map.sequence[r] * map.max_blocks + position / map.block_tokens];
  const std::size_t base =
      (static_cast<std::size_t>(block) * map.block_tokens + position % map.block_tokens) * kv_dim +
      static_cast<std::size_t>(kv_head) * d;
  bf16* out = is_k ? e.keys : e.values;
  out[base + t] = __float2bfloat16(a);
  out[base + t + half] = __float2bfloat16(b);
}

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
// shared memory. A row's keys are cut into `splits` equal ranges of its own length.
template <int E>
__global__ void __launch_bounds__(kAttentionWarps* kWarp)
    paged_attention_kernel(PagedAttention a, RowMap map, AttentionShape s) {
  __shared__ float warp_m[kAttentionWarps][kMaxGroup];
  __shared__ float warp_l[kAttentionWarps][kMaxGroup];
  __shared__ float warp_o[kAttentionWarps][kMaxGroup][kMaxHeadDim];
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
  const int first = s.window > 0 ? max(0, position - s.window + 1) : 0;
  const int split_len = (position + 1 - first + a.splits - 1) / a.splits;
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
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) {
    const int gi = i / d;
    const int c = i % d;
    float best = -FLT_MAX;
    for (int w = 0; w < kAttentionWarps; ++w) best = fmaxf(best, warp_m[w][gi]);
    float total = 0.0f;
    float value = 0.0f;
    for (int w = 0; w < kAttentionWarps; ++w) {
      if (warp_l[w][gi] == 0.0f) continue;  // a warp that saw no key
      const float f = expf(warp_m[w][gi] - best);
      total += warp_l[w][gi] * f;
      value += warp_o[w][gi][c] * f;
    }
    if (a.splits == 1) {
      const std::size_t out = (static_cast<std::size_t>(r) * s.heads + g * group + gi) * d + c;
      a.out[out] = __float2bfloat16(total > 0.0f ? value / total : 0.0f);
    } else {
      float* p =
          a.partial +
          ((static_cast<std::size_t>(item) * s.kv_heads + g) * a.splits + split) * group * (d + 2);
      p[gi * d + c] = value;
      if (c == 0) {
        p[group * d + 2 * gi] = best;
        p[group * d + 2 * gi + 1] = total;
      }
    }
  }
}

// One block per (listed row, kv head): every (split, query head)'s maximum and sum are read
// at once, one per thread, then each head's split weights are found (one thread per head),
// then every output element sums its splits. Few dependent loads: the merge is latency.
__global__ void combine_splits_kernel(PagedAttention a, AttentionShape s) {
  __shared__ float weight[kMaxSplits][kMaxGroup];
  __shared__ float sums[kMaxSplits][kMaxGroup];
  const int item = blockIdx.x;
  const int g = blockIdx.y;
  const int r = a.row_list[item];
  const int group = s.heads / s.kv_heads;
  const int d = s.head_dim;
  const std::size_t stride = static_cast<std::size_t>(group) * (d + 2);
  const float* parts =
      a.partial + (static_cast<std::size_t>(item) * s.kv_heads + g) * a.splits * stride;
  for (int e = threadIdx.x; e < a.splits * group; e += blockDim.x) {
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
    for (int p = 0; p < a.splits; ++p) {
      if (sums[p][gi] > 0.0f) best = fmaxf(best, weight[p][gi]);
    }
    float total = 0.0f;
    for (int p = 0; p < a.splits; ++p) {
      weight[p][gi] = sums[p][gi] > 0.0f ? expf(weight[p][gi] - best) : 0.0f;  // 0: empty
      total += sums[p][gi] * weight[p][gi];
    }
    const float inverse = total > 0.0f ? 1.0f / total : 0.0f;
    for (int p = 0; p < a.splits; ++p) weight[p][gi] *= inverse;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) {
    const int gi = i / d;
    float value = 0.0f;
#pragma unroll 8
    for (int p = 0; p < a.splits; ++p) value += parts[p * stride + i] * weight[p][gi];
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

__global__ void silu_mul_kernel(const bf16* gate_up, int rows, int inner, bf16* out) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(rows) * inner) return;
  const long long r = i / inner;
  const long long c = i % inner;
  const float gate = __bfloat162float(gate_up[r * 2 * inner + c]);
  const float up = __bfloat162float(gate_up[r * 2 * inner + inner + c]);
  out[i] = __float2bfloat16(gate / (1.0f + expf(-gate)) * up);
}

// Keeps the better of two (logit, token) candidates: the larger logit, the lower id on ties.
__device__ void keep_better(float& best, int& token, float other, int other_token) {
  if (other > best || (other == best && other_token < token)) {
    best = other;
    token = other_token;
  }
}

// The best candidate of the block, in every thread; `best_of`/`token_of` hold one per warp.
__device__ void block_argmax(float& best, int& token, float* best_of, int* token_of) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    keep_better(best, token, __shfl_xor_sync(0xffffffffu, best, offset),
                __shfl_xor_sync(0xffffffffu, token, offset));
  }
  if (threadIdx.x % kWarp == 0) {
    best_of[threadIdx.x / kWarp] = best;
    token_of[threadIdx.x / kWarp] = token;
  }
  __syncthreads();
  for (int w = 0; w < static_cast<int>(blockDim.x) / kWarp; ++w) {
    keep_better(best, token, best_of[w], token_of[w]);
  }
}

// Pass one: block (slice, row) finds its slice's best logit and the sum of exp(x - best)
// over the slice, so that a row's vocabulary is read by kGreedySlices blocks at once.
__global__ void greedy_slices_kernel(const float* logits, int vocab, GreedyPartial* partial) {
  __shared__ float best_of[kNormThreads / kWarp];
  __shared__ int token_of[kNormThreads / kWarp];
  __shared__ float scratch[kNormThreads / kWarp];
  const float* row = logits + static_cast<std::size_t>(blockIdx.y) * vocab;
  const int per_slice = (vocab + gridDim.x - 1) / gridDim.x;
  const int begin = static_cast<int>(blockIdx.x) * per_slice;
  const int end = min(vocab, begin + per_slice);
  float best = -FLT_MAX;
  int token = vocab;  // none: an empty slice, or one of -inf and NaN only
  int finite = 1;
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float x = row[i];
    if (!isfinite(x)) finite = 0;
    if (x > best) {  // i grows: the first of equal values is kept
      best = x;
      token = i;
    }
  }
  const int all_finite = __syncthreads_and(finite);
  block_argmax(best, token, best_of, token_of);
  float total = 0.0f;
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) total += expf(row[i] - best);
  total = block_sum(total, scratch);
  if (threadIdx.x == 0) {
    partial[blockIdx.y * gridDim.x + blockIdx.x] = GreedyPartial{best, token, total, all_finite};
  }
}

// Pass two: one warp per row merges the slices.
__global__ void greedy_merge_kernel(const GreedyPartial* partial, int slices, GreedyPick* out) {
  const GreedyPartial* row = partial + static_cast<std::size_t>(blockIdx.x) * slices;
  const int lane = threadIdx.x;
  float best = -FLT_MAX;
  int token = INT_MAX;
  int finite = 1;
  for (int i = lane; i < slices; i += kWarp) {
    keep_better(best, token, row[i].best, row[i].token);
    finite &= row[i].finite;
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    keep_better(best, token, __shfl_xor_sync(0xffffffffu, best, offset),
                __shfl_xor_sync(0xffffffffu, token, offset));
  }
  float total = 0.0f;
  for (int i = lane; i < slices; i += kWarp) {
    if (row[i].total > 0.0f) total += row[i].total * expf(row[i].best - best);
  }
  total = warp_sum(total);
  finite = __all_sync(0xffffffffu, finite);
  if (lane == 0) out[blockIdx.x] = GreedyPick{token, -logf(total), finite};
}

template <int E>
void launch_paged(const PagedAttention& a, const RowMap& map, const AttentionShape& s,
                  cudaStream_t stream) {
  const dim3 grid(a.count, s.kv_heads, a.splits);
  paged_attention_kernel<E><<<grid, kAttentionWarps * kWarp, 0, stream>>>(a, map, s);
}

}  // namespace

cudaError_t embed(const bf16* table, const int* tokens, int rows, int hidden, float* x,
                  cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  embed_kernel<<<rows, kNormThreads, 0, stream>>>(table, tokens, hidden, x);
  return cudaGetLastError();
}

cudaError_t rms_norm(const float* x, const int* rows_of, int rows, int hidden, const float* weight,
                     float eps, bf16* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  rms_norm_kernel<bf16>
      <<<rows, norm_threads(hidden), 0, stream>>>(x, rows_of, hidden, weight, eps, out);
  return cudaGetLastError();
}

cudaError_t rms_norm_f32(const float* x, int rows, int hidden, const float* weight, float eps,
                         float* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  rms_norm_kernel<float>
      <<<rows, norm_threads(hidden), 0, stream>>>(x, nullptr, hidden, weight, eps, out);
  return cudaGetLastError();
}

cudaError_t qkv_epilogue(const QkvEpilogue& e, const RowMap& map, const AttentionShape& shape,
                         int first, int count, int rows, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const int half = shape.head_dim / 2;
  const int threads = (half + kWarp - 1) / kWarp * kWarp;
  const dim3 grid(count, shape.heads + 2 * shape.kv_heads);
  qkv_epilogue_kernel<<<grid, threads, 0, stream>>>(e, map, shape, first, rows);
  return cudaGetLastError();
}

cudaError_t paged_attention(const PagedAttention& a, const RowMap& map, const AttentionShape& shape,
                            cudaStream_t stream) {
  if (a.count == 0) return cudaSuccess;
  const int d = shape.head_dim;
  if (d <= 32) {
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
    combine_splits_kernel<<<dim3(a.count, shape.kv_heads), threads, 0, stream>>>(a, shape);
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

cudaError_t silu_mul(const bf16* gate_up, int rows, int inner, bf16* out, cudaStream_t stream) {
  const long long total = static_cast<long long>(rows) * inner;
  if (total == 0) return cudaSuccess;
  silu_mul_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(gate_up, rows, inner, out);
  return cudaGetLastError();
}

cudaError_t greedy(const float* logits, int rows, int vocab, GreedyPartial* scratch,
                   GreedyPick* out, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  const int slices = std::clamp(vocab / (4 * kNormThreads), 1, kGreedySlices);
  greedy_slices_kernel<<<dim3(slices, rows), kNormThreads, 0, stream>>>(logits, vocab, scratch);
  greedy_merge_kernel<<<rows, kWarp, 0, stream>>>(scratch, slices, out);
  return cudaGetLastError();
}

}  // namespace baton::cuda::kernels
