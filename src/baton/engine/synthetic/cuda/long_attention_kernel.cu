#include <cuda_bf16.h>

#include "baton/engine/synthetic/cuda/long_attention_kernel.h"

namespace baton::cuda {
namespace {

constexpr int kWarps = 8;
constexpr int kDimsPerLane = 8;  // 32 lanes x 8 = 256: one 16-byte load of bf16 per lane

struct Partial {
  float max;
  float sum;
};

__device__ void load_row(const __nv_bfloat16* row, int lane, float (&x)[kDimsPerLane]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(row + lane * kDimsPerLane);
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
  for (int i = 0; i < kDimsPerLane / 2; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    x[2 * i] = f.x;
    x[2 * i + 1] = f.y;
  }
}

// Block = one head, 8 warps; warp w takes keys w, w+8, ...; each lane holds 8 dims. An
// online softmax per warp, then the warps' partial results merge in shared memory.
__global__ void long_attention(const float* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                               float* out, std::size_t keys) {
  const int head = blockIdx.x;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const std::size_t d = kLongAttentionHeadDim;
  const float scale = rsqrtf(static_cast<float>(d));
  float qv[kDimsPerLane];
  for (int i = 0; i < kDimsPerLane; ++i) qv[i] = q[head * d + lane * kDimsPerLane + i] * scale;
  const __nv_bfloat16* kh = k + head * keys * d;
  const __nv_bfloat16* vh = v + head * keys * d;
  float acc[kDimsPerLane] = {};
  Partial p{-INFINITY, 0.0f};
  for (std::size_t j = warp; j < keys; j += kWarps) {
    float kv[kDimsPerLane];
    load_row(kh + j * d, lane, kv);
    float score = 0.0f;
    for (int i = 0; i < kDimsPerLane; ++i) score += qv[i] * kv[i];
    for (int offset = 16; offset > 0; offset /= 2) {
      score += __shfl_xor_sync(0xffffffffu, score, offset);
    }
    const float new_max = fmaxf(p.max, score);
    const float rescale = __expf(p.max - new_max);
    const float weight = __expf(score - new_max);
    float vv[kDimsPerLane];
    load_row(vh + j * d, lane, vv);
    for (int i = 0; i < kDimsPerLane; ++i) acc[i] = acc[i] * rescale + weight * vv[i];
    p.sum = p.sum * rescale + weight;
    p.max = new_max;
  }
  __shared__ Partial partials[kWarps];
  __shared__ float accs[kWarps][kLongAttentionHeadDim];
  if (lane == 0) partials[warp] = p;
  for (int i = 0; i < kDimsPerLane; ++i) accs[warp][lane * kDimsPerLane + i] = acc[i];
  __syncthreads();
  // Thread t merges dimension t over the warps.
  const int dim = threadIdx.x;
  float max = -INFINITY;
  for (int w = 0; w < kWarps; ++w) max = fmaxf(max, partials[w].max);
  float sum = 0.0f;
  float value = 0.0f;
  for (int w = 0; w < kWarps; ++w) {
    if (partials[w].sum == 0.0f) continue;  // a warp that saw no key
    const float factor = __expf(partials[w].max - max);
    sum += partials[w].sum * factor;
    value += accs[w][dim] * factor;
  }
  out[head * d + dim] = value / sum;
}

}  // namespace

cudaError_t launch_long_attention(cudaStream_t stream, const float* q, const void* k, const void* v,
                                  float* out, std::size_t heads, std::size_t keys) {
  long_attention<<<static_cast<unsigned>(heads), kWarps * 32, 0, stream>>>(
      q, static_cast<const __nv_bfloat16*>(k), static_cast<const __nv_bfloat16*>(v), out, keys);
  return cudaGetLastError();
}

}  // namespace baton::cuda
