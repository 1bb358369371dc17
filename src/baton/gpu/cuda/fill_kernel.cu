#include <cuda_bf16.h>

#include "baton/gpu/cuda/fill_kernel.h"

namespace baton::cuda {
namespace {

__global__ void fill_bf16(__nv_bfloat16* data, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    data[i] = __float2bfloat16(static_cast<float>(x & 0xffffu) / 32768.0f - 1.0f);
  }
}

}  // namespace

cudaError_t launch_fill_bf16(cudaStream_t stream, void* data, std::size_t count,
                             std::uint32_t seed) {
  fill_bf16<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
  return cudaGetLastError();
}

}  // namespace baton::cuda
