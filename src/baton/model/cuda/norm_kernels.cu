// The embedding, RMSNorm and the q/k/v epilogue (bias, q/k norm, RoPE, the KV store) (model_kernels.h).
#include <algorithm>
#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {
namespace {

using namespace detail;

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
  let_next_kernel_start();  // a weight product after this one may begin its loads
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


}  // namespace baton::cuda::kernels
