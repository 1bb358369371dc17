// SwiGLU and the greedy pick on the device (model_kernels.h).
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/model_kernels.h"

namespace baton::cuda::kernels {
namespace {

using namespace detail;


__global__ void silu_mul_kernel(const bf16* gate_up, int rows, int inner, bf16* out) {
  let_next_kernel_start();  // a weight product after this one may begin its loads
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(rows) * inner) return;
  const long long r = i / inner;
  const long long c = i % inner;
  const float gate = __bfloat162float(gate_up[r * 2 * inner + c]);
  const float up = __bfloat162float(gate_up[r * 2 * inner + inner + c]);
  out[i] = __float2bfloat16(silu_times(gate, up));
}

// Two bf16 values of each: silu(gate) * up, rounded as the kernel above rounds.
__device__ __nv_bfloat162 silu_mul2(__nv_bfloat162 gate, __nv_bfloat162 up) {
  const float2 g = __bfloat1622float2(gate);
  const float2 u = __bfloat1622float2(up);
  return __floats2bfloat162_rn(silu_times(g.x, u.x), silu_times(g.y, u.y));
}

// The same, eight columns a thread in 16-byte loads and stores (inner % 8 == 0): the
// one-value kernel moved 1.25 TB/s in an 8B prefill chunk (ncu, the sixth H100 run),
// 7.5 % of the chunk.
__global__ void silu_mul8_kernel(const bf16* gate_up, int rows, int inner, bf16* out) {
  let_next_kernel_start();
  const int groups = inner / 8;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(rows) * groups) return;
  const long long r = i / groups;
  const long long c = (i % groups) * 8;
  const uint4 gate = __ldcs(reinterpret_cast<const uint4*>(gate_up + r * 2 * inner + c));
  const uint4 up = __ldcs(reinterpret_cast<const uint4*>(gate_up + r * 2 * inner + inner + c));
  uint4 result;
  const auto* g = reinterpret_cast<const __nv_bfloat162*>(&gate);
  const auto* u = reinterpret_cast<const __nv_bfloat162*>(&up);
  auto* o = reinterpret_cast<__nv_bfloat162*>(&result);
#pragma unroll
  for (int k = 0; k < 4; ++k) o[k] = silu_mul2(g[k], u[k]);
  *reinterpret_cast<uint4*>(out + r * inner + c) = result;
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

}  // namespace

cudaError_t silu_mul(const bf16* gate_up, int rows, int inner, bf16* out, cudaStream_t stream) {
  const long long total = static_cast<long long>(rows) * inner;
  if (total == 0) return cudaSuccess;
  const bool whole_loads = inner % 8 == 0 && reinterpret_cast<std::uintptr_t>(gate_up) % 16 == 0 &&
                           reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  if (whole_loads) {
    silu_mul8_kernel<<<blocks_for(total / 8, 256), 256, 0, stream>>>(gate_up, rows, inner, out);
  } else {
    silu_mul_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(gate_up, rows, inner, out);
  }
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
