// Prefill attention alone on the GPU (issue 50: attention at the tensor cores' rate): one
// causal chunk of L query rows over its own L keys, Llama-3.1-8B's heads (32 query heads,
// 8 KV heads, head size 128), for each flash kernel (WMMA; mma with 4 and 8 warps a block),
// at L = 2K, 8K and 32K.
// Usage: attention_bench [LENGTH...]   (default 2048 8192 32768)
// Prints TFLOP/s counted as FlashAttention's papers count a causal pass: 4 x heads x
// head_dim x L^2 / 2 (the products of the scores and of the values over the visible half);
// medians of 5 timed runs (bench/gpu_timing.h). bench/peers/sdpa_attention.py measures
// PyTorch's SDPA backends at the same shapes, counted alike.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/model/cuda/flash_attention.h"
#include "gpu_timing.h"

namespace {

using baton::cuda::DeviceBuffer;
using baton::cuda::kernels::AttentionShape;
using baton::cuda::kernels::bf16;
using baton::cuda::kernels::FlashChunk;
using baton::cuda::kernels::FlashKernel;

constexpr AttentionShape kShape{.heads = 32, .kv_heads = 8, .head_dim = 128};

// Random-looking bf16 in [-1, 1): the rate does not depend on the values, only on their
// being finite.
void fill(DeviceBuffer& buffer, std::size_t count) {
  std::vector<std::uint16_t> host(count);
  std::uint32_t state = 12345;
  for (auto& v : host) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<std::uint16_t>(0x3c00u | ((state >> 9) & 0x807fu));  // |x| in [2^-7, 2^-6)
  }
  BATON_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), count * 2, cudaMemcpyHostToDevice));
}

double tflops(int length, double ms) {
  const double flops = 4.0 * kShape.heads * kShape.head_dim * length * (length + 1.0) / 2.0;
  return flops / (ms * 1e-3) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> lengths;
  for (int i = 1; i < argc; ++i) lengths.push_back(std::atoi(argv[i]));
  if (lengths.empty()) lengths = {2048, 8192, 32768};
  cudaDeviceProp props{};
  BATON_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  std::printf("%s; causal prefill attention, %d heads, %d KV heads, head size %d\n\n", props.name,
              kShape.heads, kShape.kv_heads, kShape.head_dim);
  std::printf("%-8s %-6s %10s %10s\n", "length", "kernel", "ms", "TFLOP/s");
  for (const int length : lengths) {
    const std::size_t d = kShape.head_dim;
    const std::size_t q_count = static_cast<std::size_t>(length) * kShape.heads * d;
    const std::size_t kv_count = static_cast<std::size_t>(length) * kShape.kv_heads * d;
    DeviceBuffer q(q_count * 2), keys(kv_count * 2), values(kv_count * 2), out(q_count * 2);
    fill(q, q_count);
    fill(keys, kv_count);
    fill(values, kv_count);
    for (const FlashKernel kernel : {FlashKernel::wmma, FlashKernel::mma, FlashKernel::mma8}) {
      const FlashChunk chunk{.q = static_cast<const bf16*>(q.get()),
                             .keys = static_cast<const bf16*>(keys.get()),
                             .values = static_cast<const bf16*>(values.get()),
                             .rows = length,
                             .count = length,
                             .out = static_cast<bf16*>(out.get()),
                             .kernel = kernel};
      const int repeats = length <= 4096 ? 20 : 3;
      const double ms = baton::bench::milliseconds(
          [&](int) {
            BATON_CUDA_CHECK(baton::cuda::kernels::flash_attention(chunk, kShape, nullptr));
          },
          repeats);
      const char* name = kernel == FlashKernel::wmma  ? "wmma"
                         : kernel == FlashKernel::mma ? "mma"
                                                      : "mma8";
      std::printf("%-8d %-6s %10.3f %10.1f\n", length, name, ms, tflops(length, ms));
    }
  }
  return 0;
}
