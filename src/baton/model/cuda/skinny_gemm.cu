#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/skinny_gemm.h"

namespace baton::cuda::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kThreads = 256;  // 8 warps
constexpr int kFeatures = 2;   // rows of w per warp
constexpr int kUnroll = 4;

__device__ void unpack(const uint4& v, float (&out)[8]) {
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

__device__ void put(float* y, float value, float beta) {
  *y = value + (beta != 0.0f ? beta * *y : 0.0f);
}
__device__ void put(bf16* y, float value, float) { *y = __float2bfloat16(value); }

// Each warp owns kFeatures consecutive rows of w and keeps kUnroll 16-byte loads of each in
// flight before the first is used; lanes stride along `in`, then the warp sums.
template <int R, typename Out>
__global__ void __launch_bounds__(kThreads)
    skinny_kernel(const bf16* x, const bf16* w, int out, int in, Out* y, float beta) {
  const long long warp_index =
      (static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  const int first = static_cast<int>(warp_index * kFeatures);
  const int lane = threadIdx.x % kWarp;
  if (first >= out) return;
  const int features = min(kFeatures, out - first);
  // The first step's weights start toward L2 while the kernel before this one ends.
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    const bf16* row = w + static_cast<std::size_t>(first + min(f, features - 1)) * in;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = lane * 8 + u * kWarp * 8;
      if (i < in) detail::prefetch_l2(row + i);
    }
  }
  detail::wait_for_previous_kernel();
  detail::let_next_kernel_start();
  float acc[kFeatures][R];
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[f][r] = 0.0f;
  }
  for (int base = lane * 8; base < in; base += kWarp * 8 * kUnroll) {
    uint4 loaded[kFeatures][kUnroll];
#pragma unroll
    for (int f = 0; f < kFeatures; ++f) {
      const bf16* row = w + static_cast<std::size_t>(first + min(f, features - 1)) * in;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kWarp * 8;
        loaded[f][u] =
            i < in ? __ldcs(reinterpret_cast<const uint4*>(row + i)) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kWarp * 8;
      if (i >= in) break;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float values[8];
        unpack(*reinterpret_cast<const uint4*>(x + static_cast<std::size_t>(r) * in + i), values);
#pragma unroll
        for (int f = 0; f < kFeatures; ++f) {
          float weights[8];
          unpack(loaded[f][u], weights);
#pragma unroll
          for (int k = 0; k < 8; ++k) acc[f][r] += weights[k] * values[k];
        }
      }
    }
  }
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        acc[f][r] += __shfl_xor_sync(0xffffffffu, acc[f][r], offset);
      }
    }
  }
  if (lane != 0) return;
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    if (f >= features) break;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      put(y + static_cast<std::size_t>(r) * out + first + f, acc[f][r], beta);
    }
  }
}

template <typename Out>
cudaError_t launch(const bf16* x, int rows, const bf16* w, int out, int in, Out* y, float beta,
                   cudaStream_t stream) {
  const long long warps = (static_cast<long long>(out) + kFeatures - 1) / kFeatures;
  const int blocks = static_cast<int>((warps * kWarp + kThreads - 1) / kThreads);
  static_assert(kSkinnyMaxRows == 1, "instantiate a kernel for each row count");
  if (rows != 1) return cudaErrorInvalidValue;
  return detail::launch_dependent(skinny_kernel<1, Out>, dim3(blocks), dim3(kThreads), stream, x,
                                  w, out, in, y, beta);
}

}  // namespace

cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream) {
  if (!skinny_fits(rows, in)) return cudaErrorInvalidValue;
  return launch(x, rows, w, out, in, y, beta, stream);
}

cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream) {
  if (!skinny_fits(rows, in)) return cudaErrorInvalidValue;
  return launch(x, rows, w, out, in, y, 0.0f, stream);
}

}  // namespace baton::cuda::kernels
