#include <cuda_fp8.h>

#include <cstdint>

#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/dependent_launch.cuh"
#include "baton/model/cuda/int8_widening.h"
#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/q8_weights.h"
#include "baton/model/cuda/tensor_core.cuh"

namespace baton::cuda::kernels {
namespace {

using detail::let_next_kernel_start;
using detail::mma_16x8x16;
using detail::prefetch_l2;
using detail::put;
using detail::wait_for_previous_kernel;

constexpr int kWarp = 32;
constexpr int kWarps = 8;
constexpr int kThreads = kWarp * kWarps;
constexpr int kGroup = 32;  // inner values a warp takes per step: 4 lanes x 8 each

// Steps whose loads are all in flight before the first product: about 12-16 loads a lane.
__host__ __device__ constexpr int unroll_for(int loads_per_step) {
  return loads_per_step <= 4 ? 4 : 2;
}

// Two E4M3 values as bf16x2: exact (every E4M3 value is an f16 and a bf16 value).
__device__ unsigned widen_fp8x2(unsigned short pair) {
  const __half2 h(__nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3));
  const __nv_bfloat162 b = __float22bfloat162_rn(__half22float2(h));
  return *reinterpret_cast<const unsigned*>(&b);
}

// A lane's 8 weights of a group: loaded raw (weights are read once a step, so streamed
// past the caches) and widened to the 8 bf16 values the mma takes only when multiplied,
// so that every load of a step is in flight before the first result is waited for.
// kGroupScaled: a scale per 32 inner values of a feature (Q8_0, whose rows are padded to
// whole groups: row_stride), else one per feature (or none).
template <typename W>
struct Weights;

template <>
struct Weights<bf16> {
  static constexpr bool kGroupScaled = false;
  using Raw = uint4;
  __device__ static Raw load(const bf16* p) { return __ldcs(reinterpret_cast<const uint4*>(p)); }
  template <int NT>
  __device__ static uint4 widen(const Raw& raw) {
    return raw;
  }
};

// E4M3: 8 bytes a load (twice the unroll was measured slower on the H100: fewer steps).
template <>
struct Weights<std::uint8_t> {
  static constexpr bool kGroupScaled = false;
  using Raw = uint2;
  __device__ static Raw load(const std::uint8_t* p) {
    return __ldcs(reinterpret_cast<const uint2*>(p));
  }
  template <int NT>
  __device__ static uint4 widen(const Raw& q) {
    return make_uint4(widen_fp8x2(static_cast<unsigned short>(q.x & 0xffffu)),
                      widen_fp8x2(static_cast<unsigned short>(q.x >> 16)),
                      widen_fp8x2(static_cast<unsigned short>(q.y & 0xffffu)),
                      widen_fp8x2(static_cast<unsigned short>(q.y >> 16)));
  }
};

// Q8_0: 8 int8 values a load, exact in bf16 (|v| <= 128); the group's scale multiplies the
// group's sums, not the weights, so no weight is rounded. Widened by conversion
// instructions for up to 8 rows and without them (int8_widening.h) from 16: on the H100
// each was the faster there, by 8-13 % and 3-8 % (docs/benchmarks.md, fifth run); both exact.
template <>
struct Weights<std::int8_t> {
  static constexpr bool kGroupScaled = true;
  using Raw = uint2;
  __device__ static Raw load(const std::int8_t* p) {
    return __ldcs(reinterpret_cast<const uint2*>(p));
  }
  __device__ static unsigned converted_pair(unsigned word, int first) {
    const auto low = static_cast<float>(static_cast<signed char>((word >> (8 * first)) & 0xffu));
    const auto high =
        static_cast<float>(static_cast<signed char>((word >> (8 * first + 8)) & 0xffu));
    const __nv_bfloat162 b = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const unsigned*>(&b);
  }
  template <int NT>
  __device__ static uint4 widen(const Raw& q) {
    if constexpr (NT <= 1) {
      return make_uint4(converted_pair(q.x, 0), converted_pair(q.x, 2), converted_pair(q.y, 0),
                        converted_pair(q.y, 2));
    } else {
      return make_uint4(int8_pair_to_bf16x2(q.x, 0), int8_pair_to_bf16x2(q.x, 2),
                        int8_pair_to_bf16x2(q.y, 0), int8_pair_to_bf16x2(q.y, 2));
    }
  }
};

// A row's stride in w: whole groups for Q8_0 (padded with zeros), else `in`.
template <typename W>
__device__ int row_stride(int in) {
  return Weights<W>::kGroupScaled ? q8_stride(in) : in;
}

// x is read by every block: through the read-only cache.
__device__ uint4 load_rows(const bf16* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

// The 16 features of a tile (rows `low` and `low + 8` of this lane) against 8 rows of x,
// over the 8 inner values each lane loaded. The fragment's inner slots 2t, 2t+1, 2t+8, 2t+9
// of lane t are its loaded values 0-3 in the first product and 4-7 in the second: the same
// permutation for w and x, so each product still sums matching pairs.
__device__ void multiply(float (&d)[4], const uint4& low, const uint4& high, const uint4& xs) {
  mma_16x8x16(d, low.x, high.x, low.y, high.y, xs.x, xs.y);
  mma_16x8x16(d, low.z, high.z, low.w, high.w, xs.z, xs.w);
}

// A block computes MT tiles of 16 features for up to NT x 8 rows. Warp k takes the inner
// groups k, k + 8, k + 16, ... in order; the warps' sums are added in warp order. Neither
// order depends on the rows, so neither does any output. W: bf16, E4M3 bytes whose sums
// are multiplied by their feature's scale, or Q8_0 int8 whose every group's sums are
// multiplied by the group's scale (scales [out x groups]).
template <int MT, int NT, typename W, typename Out>
__global__ void __launch_bounds__(kThreads)
    decode_kernel(const bf16* x, int rows, const W* w, const float* scales, int out, int in, Out* y,
                  float beta) {
  __shared__ float partial[kWarps][16][NT * 8 + 1];  // +1: no bank conflicts below
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int g = lane / 4;
  const int t = lane % 4;
  const int first = static_cast<int>(blockIdx.x) * MT * 16;
  using Load = Weights<W>;
  const int groups = (in + kGroup - 1) / kGroup;
  // Rows past the ends are read again from the last one; their sums are never written.
  const W* weights[MT][2];
  const float* group_scales[MT][2];
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = min(first + 16 * m + 8 * h + g, out - 1);
      weights[m][h] = w + static_cast<std::size_t>(row) * row_stride<W>(in) + t * 8;
      group_scales[m][h] =
          Load::kGroupScaled ? scales + static_cast<std::size_t>(row) * q8_groups(in) : nullptr;
    }
  }
  const bf16* inputs[NT];
#pragma unroll
  for (int n = 0; n < NT; ++n) {
    inputs[n] = x + static_cast<std::size_t>(min(8 * n + g, rows - 1)) * in + t * 8;
  }
  constexpr int kUnroll = unroll_for(2 * MT + NT);
  // The first step's weights start toward L2 while the kernel before this one ends.
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int k = (warp + u * kWarps) * kGroup;
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (k + t * 8 < in) prefetch_l2(weights[m][h] + k);
      }
    }
  }
  wait_for_previous_kernel();
  let_next_kernel_start();
  float acc[MT][NT][4] = {};
  for (int base = warp; base < groups; base += kWarps * kUnroll) {
    typename Load::Raw wv[kUnroll][MT][2];
    float sv[kUnroll][MT][2];  // Q8_0 only: the groups' scales
    uint4 xv[kUnroll][NT];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = (base + u * kWarps) * kGroup;
      const bool inside = k + t * 8 < in;  // in % 8 == 0: a lane's 8 values are all in or out
#pragma unroll
      for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          wv[u][m][h] = inside ? Load::load(weights[m][h] + k) : typename Load::Raw{};
          // Every lane of a group takes its scale, also one past `in` in a last partial
          // group: the mma sums the group over the lanes, and each lane scales that sum.
          if constexpr (Load::kGroupScaled) {
            sv[u][m][h] = k < in ? __ldcs(group_scales[m][h] + base + u * kWarps) : 0.0f;
          }
        }
      }
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        xv[u][n] = inside ? load_rows(inputs[n] + k) : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        const uint4 low = Load::template widen<NT>(wv[u][m][0]);
        const uint4 high = Load::template widen<NT>(wv[u][m][1]);
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          if constexpr (Load::kGroupScaled) {
            // The accumulator's slots 0-1 are feature g (scale h = 0), 2-3 feature g + 8.
            float group[4] = {};
            multiply(group, low, high, xv[u][n]);
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[m][n][i] += group[i] * sv[u][m][i / 2];
          } else {
            multiply(acc[m][n], low, high, xv[u][n]);
          }
        }
      }
    }
  }
  // The accumulator's layout: lane (g, t) holds features g and g + 8, rows 2t and 2t + 1.
  // One tile of 16 features at a time through shared memory (all MT at once would
  // outgrow it at 64 rows).
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (m > 0) __syncthreads();  // the last tile's sums are read
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      partial[warp][g][8 * n + 2 * t] = acc[m][n][0];
      partial[warp][g][8 * n + 2 * t + 1] = acc[m][n][1];
      partial[warp][g + 8][8 * n + 2 * t] = acc[m][n][2];
      partial[warp][g + 8][8 * n + 2 * t + 1] = acc[m][n][3];
    }
    __syncthreads();
    // Consecutive threads write consecutive features of a row.
    const int tile = first + 16 * m;
    for (int i = static_cast<int>(threadIdx.x); i < 16 * NT * 8; i += kThreads) {
      const int feature = i % 16;
      const int row = i / 16;
      if (tile + feature >= out || row >= rows) continue;
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kWarps; ++k) sum += partial[k][feature][row];
      if (!Load::kGroupScaled && scales != nullptr) sum *= scales[tile + feature];
      put(y + static_cast<std::size_t>(row) * out + tile + feature, sum, beta);
    }
  }
}

template <int MT, int NT, typename W, typename Out>
cudaError_t launch_tiles(const bf16* x, int rows, const W* w, const float* scales, int out, int in,
                         Out* y, float beta, cudaStream_t stream) {
  const int blocks = (out + MT * 16 - 1) / (MT * 16);
  return detail::launch_dependent(decode_kernel<MT, NT, W, Out>, dim3(blocks), dim3(kThreads),
                                  stream, x, rows, w, scales, out, in, y, beta);
}

// Up to 8 rows: one tile of 16 features a block (x is half the weights' bytes a block);
// more: two, so that x read per block stays at most the weights' bytes (at 64 rows, twice).
template <typename W, typename Out>
cudaError_t launch(const bf16* x, int rows, const W* w, const float* scales, int out, int in,
                   Out* y, float beta, cudaStream_t stream) {
  if (!decode_gemm_fits(rows, in) || out < 1) return cudaErrorInvalidValue;
  switch ((rows + 7) / 8) {
    case 1:
      return launch_tiles<1, 1>(x, rows, w, scales, out, in, y, beta, stream);
    case 2:
      return launch_tiles<2, 2>(x, rows, w, scales, out, in, y, beta, stream);
    case 3:
      return launch_tiles<2, 3>(x, rows, w, scales, out, in, y, beta, stream);
    case 4:
      return launch_tiles<2, 4>(x, rows, w, scales, out, in, y, beta, stream);
    default:
      return launch_tiles<2, 8>(x, rows, w, scales, out, in, y, beta, stream);
  }
}

}  // namespace

cudaError_t decode_gemm(const bf16* x, int rows, const bf16* w, int out, int in, float* y,
                        float beta, cudaStream_t stream) {
  return launch(x, rows, w, nullptr, out, in, y, beta, stream);
}

cudaError_t decode_gemm(const bf16* x, int rows, const bf16* w, int out, int in, bf16* y,
                        cudaStream_t stream) {
  return launch(x, rows, w, nullptr, out, in, y, 0.0f, stream);
}

cudaError_t decode_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, float* y, float beta, cudaStream_t stream) {
  return launch(x, rows, w, scales, out, in, y, beta, stream);
}

cudaError_t decode_gemm_fp8(const bf16* x, int rows, const std::uint8_t* w, const float* scales,
                            int out, int in, bf16* y, cudaStream_t stream) {
  return launch(x, rows, w, scales, out, in, y, 0.0f, stream);
}

cudaError_t decode_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, float* y, float beta, cudaStream_t stream) {
  return launch(x, rows, w, scales, out, in, y, beta, stream);
}

cudaError_t decode_gemm_q8(const bf16* x, int rows, const std::int8_t* w, const float* scales,
                           int out, int in, bf16* y, cudaStream_t stream) {
  return launch(x, rows, w, scales, out, in, y, 0.0f, stream);
}

}  // namespace baton::cuda::kernels
