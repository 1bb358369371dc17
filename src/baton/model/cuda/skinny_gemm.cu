#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/int8_widening.h"
#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/q8_weights.h"
#include "baton/model/cuda/skinny_gemm.h"

namespace baton::cuda::kernels {
namespace {

using detail::put;

constexpr int kWarp = 32;
constexpr int kThreads = 256;  // 8 warps
constexpr int kFeatures = 2;   // rows of w per warp
constexpr int kUnroll = 4;

// Eight bf16 values as floats.
__device__ void unpack(const uint4& v, float* out) {
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// One 16-byte load of a weight row: 8 bf16 values, or 16 E4M3 or int8 values (exact in
// floats). kGroupScaled: Q8_0, a scale per 32 values (half a group a load).
template <typename W>
struct Load;

template <>
struct Load<bf16> {
  static constexpr int kValues = 8;
  static constexpr bool kGroupScaled = false;
  __device__ static void widen(const uint4& v, float* out) { unpack(v, out); }
};

template <>
struct Load<std::uint8_t> {
  static constexpr int kValues = 16;
  static constexpr bool kGroupScaled = false;
  __device__ static void widen(const uint4& v, float* out) {
    const auto* pairs = reinterpret_cast<const unsigned short*>(&v);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const float2 f = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(pairs[i], __NV_E4M3)));
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

template <>
struct Load<std::int8_t> {
  static constexpr int kValues = 16;
  static constexpr bool kGroupScaled = true;
  __device__ static void widen(const uint4& v, float* out) {  // int8_widening.h
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 16; ++i) out[i] = int8_to_float(words[i / 4], i % 4);
  }
};

// A row's stride in w: whole groups for Q8_0 (padded with zeros), else `in`.
template <typename W>
__device__ int row_stride(int in) {
  return Load<W>::kGroupScaled ? q8_stride(in) : in;
}

// The first step's weights of the warp's rows start toward L2 while the kernel before
// this one ends (they never depend on it).
template <typename W>
__device__ void prefetch_rows(const W* w, int first, int features, int in, int lane) {
  constexpr int V = Load<W>::kValues;
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    const W* row = w + static_cast<std::size_t>(first + min(f, features - 1)) * row_stride<W>(in);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = (lane + u * kWarp) * V;
      if (i < in) detail::prefetch_l2(row + i);
    }
  }
}

// The block's x with kNormed (NormedRow): `normed.residual`'s RMSNorm times its weight,
// rounded to bf16 into `xs`, by rms_norm_kernel's formula; its sum of squares runs over
// 256 threads, rms_norm_kernel's over hidden / 4, so the scale's last bit may differ (no
// batch-invariant step fuses: skinny_gemm never takes one).
__device__ void norm_into(const NormedRow& normed, int in, bf16* xs, float* scratch) {
  const auto* row = reinterpret_cast<const float4*>(normed.residual);
  float squares = 0.0f;
  for (int i = threadIdx.x; i < in / 4; i += blockDim.x) {
    const float4 v = row[i];
    squares += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  const float inverse =
      rsqrtf(detail::block_sum(squares, scratch) / static_cast<float>(in) + normed.eps);
  const auto* weight = reinterpret_cast<const float4*>(normed.weight);
  for (int i = threadIdx.x; i < in / 4; i += blockDim.x) {
    const float4 v = row[i];
    const float4 g = weight[i];
    xs[4 * i] = __float2bfloat16(v.x * inverse * g.x);
    xs[4 * i + 1] = __float2bfloat16(v.y * inverse * g.y);
    xs[4 * i + 2] = __float2bfloat16(v.z * inverse * g.z);
    xs[4 * i + 3] = __float2bfloat16(v.w * inverse * g.w);
  }
  __syncthreads();
}

// The block's x with kActivated (ActivatedRow): silu(gate) * up of the row, rounded to bf16
// into `xs` as silu_mul rounds it, eight columns a thread in 16-byte loads.
__device__ void activate_into(const ActivatedRow& activated, int in, bf16* xs) {
  const auto* gate = reinterpret_cast<const uint4*>(activated.gate_up);
  const auto* up = reinterpret_cast<const uint4*>(activated.gate_up + in);
  for (int i = threadIdx.x; i < in / 8; i += blockDim.x) {
    const uint4 g = gate[i];
    const uint4 u = up[i];
    float gates[8];
    float ups[8];
    unpack(g, gates);
    unpack(u, ups);
    uint4 result;
    auto* pairs = reinterpret_cast<__nv_bfloat162*>(&result);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      pairs[k] = __floats2bfloat162_rn(detail::silu_times(gates[2 * k], ups[2 * k]),
                                       detail::silu_times(gates[2 * k + 1], ups[2 * k + 1]));
    }
    reinterpret_cast<uint4*>(xs)[i] = result;
  }
  __syncthreads();
}

// Where a block's x comes from: read (x), or made by the block into shared memory.
enum class Stage { read, normed, activated };

// Each warp owns kFeatures consecutive rows of w and keeps kUnroll 16-byte loads of each in
// flight before the first is used; lanes stride along `in`, then the warp sums. E4M3
// weights: each feature's sum times its scale; Q8_0: each load's sum times its group's.
// Stage::normed: x is the block's own RMSNorm of a row (NormedRow), Stage::activated its
// own SwiGLU of one (ActivatedRow); neither reads x.
template <typename W, typename Out, Stage kStage>
__global__ void __launch_bounds__(kThreads)
    skinny_kernel(const bf16* x, const W* w, const float* scales, int out, int in, Out* y,
                  float beta, NormedRow normed, ActivatedRow activated) {
  constexpr int V = Load<W>::kValues;
  const long long warp_index =
      (static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  const int first = static_cast<int>(warp_index * kFeatures);
  const int lane = threadIdx.x % kWarp;
  if constexpr (kStage != Stage::read) {
    // Every warp of the block makes x, the ones past `out` too (the block waits for all).
    constexpr int kStaged = kStage == Stage::normed ? kNormedMaxIn : kActivatedMaxIn;
    __shared__ __align__(16) bf16 xs[kStaged];
    if (first < out) prefetch_rows<W>(w, first, min(kFeatures, out - first), in, lane);
    detail::wait_for_previous_kernel();
    detail::let_next_kernel_start();
    if constexpr (kStage == Stage::normed) {
      __shared__ float scratch[kWarp];
      norm_into(normed, in, xs, scratch);
    } else {
      activate_into(activated, in, xs);
    }
    x = xs;
  }
  if (first >= out) return;
  const int features = min(kFeatures, out - first);
  const W* rows[kFeatures];
  const float* group_scales[kFeatures];
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    const int row = first + min(f, features - 1);
    rows[f] = w + static_cast<std::size_t>(row) * row_stride<W>(in);
    group_scales[f] =
        Load<W>::kGroupScaled ? scales + static_cast<std::size_t>(row) * q8_groups(in) : nullptr;
  }
  if constexpr (kStage == Stage::read) {
    prefetch_rows<W>(w, first, features, in, lane);
    detail::wait_for_previous_kernel();
    detail::let_next_kernel_start();
  }
  float acc[kFeatures] = {};
  for (int base = lane * V; base < in; base += kWarp * V * kUnroll) {
    uint4 loaded[kFeatures][kUnroll];
    float group_scale[kFeatures][kUnroll];  // Q8_0 only
#pragma unroll
    for (int f = 0; f < kFeatures; ++f) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kWarp * V;
        // in % 8 == 0; 8-bit rows end on a 16-byte boundary only when in % 16 == 0.
        loaded[f][u] = i + V <= in ? __ldcs(reinterpret_cast<const uint4*>(rows[f] + i))
                                   : make_uint4(0, 0, 0, 0);
        if constexpr (Load<W>::kGroupScaled) {
          group_scale[f][u] = i + V <= in ? __ldcs(group_scales[f] + i / kQ8Group) : 0.0f;
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kWarp * V;
      if (i >= in) break;
      float values[V];
#pragma unroll
      for (int part = 0; part < V / 8; ++part) {
        unpack(*reinterpret_cast<const uint4*>(x + i + 8 * part), values + 8 * part);
      }
#pragma unroll
      for (int f = 0; f < kFeatures; ++f) {
        float weights[V];
        Load<W>::widen(loaded[f][u], weights);
        if constexpr (Load<W>::kGroupScaled) {
          float sum = 0.0f;
#pragma unroll
          for (int k = 0; k < V; ++k) sum += weights[k] * values[k];
          acc[f] += sum * group_scale[f][u];
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) acc[f] += weights[k] * values[k];
        }
      }
    }
  }
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      acc[f] += __shfl_xor_sync(0xffffffffu, acc[f], offset);
    }
  }
  if (lane != 0) return;
#pragma unroll
  for (int f = 0; f < kFeatures; ++f) {
    if (f >= features) break;
    const float scale = scales != nullptr && !Load<W>::kGroupScaled ? scales[first + f] : 1.0f;
    put(y + first + f, acc[f] * scale, beta);
  }
}

// Where x comes from for one launch: x itself, or one of the rows a block stages.
struct Input {
  const bf16* x = nullptr;
  const NormedRow* normed = nullptr;
  const ActivatedRow* activated = nullptr;
};

template <typename W, typename Out>
cudaError_t launch(Input input, int rows, const W* w, const float* scales, int out, int in, Out* y,
                   float beta, cudaStream_t stream) {
  static_assert(kSkinnyMaxRows == 1, "instantiate a kernel for each row count");
  if (!skinny_fits(rows, in) || (sizeof(W) == 1 && in % 16 != 0)) return cudaErrorInvalidValue;
  const long long warps = (static_cast<long long>(out) + kFeatures - 1) / kFeatures;
  const dim3 blocks(static_cast<unsigned>((warps * kWarp + kThreads - 1) / kThreads));
  if (input.normed != nullptr) {
    if (!normed_fits(in)) return cudaErrorInvalidValue;
    return detail::launch_dependent(skinny_kernel<W, Out, Stage::normed>, blocks, dim3(kThreads),
                                    stream, input.x, w, scales, out, in, y, beta, *input.normed,
                                    ActivatedRow{});
  }
  if (input.activated != nullptr) {
    if (!activated_fits(in) ||
        reinterpret_cast<std::uintptr_t>(input.activated->gate_up) % 16 != 0) {
      return cudaErrorInvalidValue;
    }
    return detail::launch_dependent(skinny_kernel<W, Out, Stage::activated>, blocks, dim3(kThreads),
                                    stream, input.x, w, scales, out, in, y, beta, NormedRow{},
                                    *input.activated);
  }
  return detail::launch_dependent(skinny_kernel<W, Out, Stage::read>, blocks, dim3(kThreads),
                                  stream, input.x, w, scales, out, in, y, beta, NormedRow{},
                                  ActivatedRow{});
}

}  // namespace

cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, nullptr, out, in, y, beta, stream);
}

cudaError_t skinny_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, nullptr, out, in, y, 0.0f, stream);
}

cudaError_t skinny_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, float* y, float beta, cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, scales, out, in, y, beta, stream);
}

cudaError_t skinny_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, bf16* y, cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, scales, out, in, y, 0.0f, stream);
}

cudaError_t skinny_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, float* y, float beta, cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, scales, out, in, y, beta, stream);
}

cudaError_t skinny_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, bf16* y, cudaStream_t stream) {
  return launch(Input{.x = x}, rows, w, scales, out, in, y, 0.0f, stream);
}

cudaError_t skinny_gemm_normed(const NormedRow& normed, const bf16* w, int out, int in, float* y,
                               cudaStream_t stream) {
  return launch<bf16, float>(Input{.normed = &normed}, 1, w, nullptr, out, in, y, 0.0f, stream);
}

cudaError_t skinny_gemm_normed(const NormedRow& normed, const bf16* w, int out, int in, bf16* y,
                               cudaStream_t stream) {
  return launch<bf16, bf16>(Input{.normed = &normed}, 1, w, nullptr, out, in, y, 0.0f, stream);
}

cudaError_t skinny_gemm_normed_fp8(const NormedRow& normed, const std::uint8_t* w,
                                   const float* scales, int out, int in, float* y,
                                   cudaStream_t stream) {
  return launch<std::uint8_t, float>(Input{.normed = &normed}, 1, w, scales, out, in, y, 0.0f,
                                     stream);
}

cudaError_t skinny_gemm_normed_fp8(const NormedRow& normed, const std::uint8_t* w,
                                   const float* scales, int out, int in, bf16* y,
                                   cudaStream_t stream) {
  return launch<std::uint8_t, bf16>(Input{.normed = &normed}, 1, w, scales, out, in, y, 0.0f,
                                    stream);
}

cudaError_t skinny_gemm_normed_q8(const NormedRow& normed, const std::int8_t* w,
                                  const float* scales, int out, int in, float* y,
                                  cudaStream_t stream) {
  return launch<std::int8_t, float>(Input{.normed = &normed}, 1, w, scales, out, in, y, 0.0f,
                                    stream);
}

cudaError_t skinny_gemm_normed_q8(const NormedRow& normed, const std::int8_t* w,
                                  const float* scales, int out, int in, bf16* y,
                                  cudaStream_t stream) {
  return launch<std::int8_t, bf16>(Input{.normed = &normed}, 1, w, scales, out, in, y, 0.0f,
                                   stream);
}

cudaError_t skinny_gemm_activated(const ActivatedRow& activated, const bf16* w, int out, int in,
                                  float* y, float beta, cudaStream_t stream) {
  return launch<bf16, float>(Input{.activated = &activated}, 1, w, nullptr, out, in, y, beta,
                             stream);
}

cudaError_t skinny_gemm_activated_fp8(const ActivatedRow& activated, const std::uint8_t* w,
                                      const float* scales, int out, int in, float* y, float beta,
                                      cudaStream_t stream) {
  return launch<std::uint8_t, float>(Input{.activated = &activated}, 1, w, scales, out, in, y, beta,
                                     stream);
}

cudaError_t skinny_gemm_activated_q8(const ActivatedRow& activated, const std::int8_t* w,
                                     const float* scales, int out, int in, float* y, float beta,
                                     cudaStream_t stream) {
  return launch<std::int8_t, float>(Input{.activated = &activated}, 1, w, scales, out, in, y, beta,
                                    stream);
}

}  // namespace baton::cuda::kernels
