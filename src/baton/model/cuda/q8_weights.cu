#include "baton/model/cuda/kernel_support.cuh"
#include "baton/model/cuda/q8_weights.h"

namespace baton::cuda::kernels {
namespace {

__global__ void dequantize_kernel(const std::int8_t* q, const float* scales, long long count,
                                  int cols, int groups, bf16* w) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const long long row = i / cols;
  const int col = static_cast<int>(i % cols);
  const float value = static_cast<float>(q[row * groups * kQ8Group + col]);
  w[i] = __float2bfloat16(value * scales[row * groups + col / kQ8Group]);
}

}  // namespace

cudaError_t dequantize_q8_rows(const std::int8_t* q, const float* scales, int rows, int cols,
                               bf16* w, cudaStream_t stream) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const long long count = static_cast<long long>(rows) * cols;
  const int groups = q8_groups(cols);
  dequantize_kernel<<<detail::blocks_for(count, 256), 256, 0, stream>>>(q, scales, count, cols,
                                                                        groups, w);
  return cudaGetLastError();
}

}  // namespace baton::cuda::kernels
