#include <cuda_fp8.h>

#include "baton/model/cuda/fp8_weights.h"
#include "baton/model/cuda/kernel_support.cuh"

namespace baton::cuda::kernels {
namespace {

using detail::block_max;
using detail::kNormThreads;

// One block a row: its largest magnitude, then each value over the scale.
__global__ void __launch_bounds__(kNormThreads)
    quantize_kernel(const bf16* w, int cols, std::uint8_t* q, float* scales) {
  __shared__ float scratch[kNormThreads / detail::kWarp];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * cols;
  float largest = 0.0f;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += kNormThreads)
    largest = fmaxf(largest, fabsf(__bfloat162float(w[base + c])));
  largest = block_max(largest, scratch);
  const float scale = largest > 0.0f ? largest / kFp8E4m3Max : 1.0f;
  if (threadIdx.x == 0) scales[blockIdx.x] = scale;
  for (int c = static_cast<int>(threadIdx.x); c < cols; c += kNormThreads) {
    q[base + c] =
        __nv_cvt_float_to_fp8(__bfloat162float(w[base + c]) / scale, __NV_SATFINITE, __NV_E4M3);
  }
}

__global__ void dequantize_kernel(const std::uint8_t* q, const float* scales, long long count,
                                  int cols, bf16* w) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const __half h(__nv_cvt_fp8_to_halfraw(q[i], __NV_E4M3));
  w[i] = __float2bfloat16(__half2float(h) * scales[i / cols]);
}

}  // namespace

cudaError_t quantize_fp8_rows(const bf16* w, int rows, int cols, std::uint8_t* q, float* scales,
                              cudaStream_t stream) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  quantize_kernel<<<rows, kNormThreads, 0, stream>>>(w, cols, q, scales);
  return cudaGetLastError();
}

cudaError_t dequantize_fp8_rows(const std::uint8_t* q, const float* scales, int rows, int cols,
                                bf16* w, cudaStream_t stream) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const long long count = static_cast<long long>(rows) * cols;
  dequantize_kernel<<<detail::blocks_for(count, 256), 256, 0, stream>>>(q, scales, count, cols, w);
  return cudaGetLastError();
}

}  // namespace baton::cuda::kernels
