// What the model kernels' files share: block sizes, warp and block reductions, the grid
// size for a count, and how a product stores an output. Internal to model/cuda/'s .cu files.
// Thread-safety: device code and a pure helper.
#pragma once

#include <cfloat>

#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels::detail {

constexpr int kWarp = 32;
constexpr int kNormThreads = 256;
constexpr int kAttentionWarps = 4;
constexpr int kKeysPerWarp = 4;

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

// Sum over the block (every thread gets it); `scratch` holds one float per warp.
__device__ inline float block_sum(float v, float* scratch) {
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

__device__ inline float block_max(float v, float* scratch) {
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

inline int blocks_for(long long count, int threads) {
  return static_cast<int>((count + threads - 1) / threads);
}

// A product's output: f32 y plus beta times what it held, or bf16 y (beta 0).
__device__ inline void put(float* y, float value, float beta) {
  *y = value + (beta != 0.0f ? beta * *y : 0.0f);
}
__device__ inline void put(bf16* y, float value, float) { *y = __float2bfloat16(value); }

// SwiGLU of one column: silu(gate) * up, the one formula of silu_mul and of the products
// that activate their own input (skinny_gemm.h ActivatedRow), so that both round alike.
__device__ inline float silu_times(float gate, float up) {
  return gate / (1.0f + expf(-gate)) * up;
}

}  // namespace baton::cuda::kernels::detail
