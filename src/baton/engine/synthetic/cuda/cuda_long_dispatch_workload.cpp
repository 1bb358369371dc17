#include "baton/engine/synthetic/cuda/cuda_long_dispatch_workload.h"

#include <random>
#include <stdexcept>

#include "baton/engine/synthetic/cuda/long_attention_kernel.h"
#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_stream.h"
#include "baton/gpu/cuda/fill_kernel.h"

namespace baton::cuda {
namespace {

constexpr std::size_t kBf16Bytes = 2;  // one bf16 value

const AttentionShape& checked(const AttentionShape& s) {
  if (s.layers == 0 || s.heads == 0 || s.keys == 0 || s.head_dim != kLongAttentionHeadDim) {
    throw std::invalid_argument(
        "[CudaLongDispatchWorkload] layers, heads and keys must be positive and head_dim 256");
  }
  return s;
}

std::vector<float> floats(const DeviceBuffer& buffer) {
  std::vector<float> out(buffer.bytes() / sizeof(float));
  BATON_CUDA_CHECK(cudaMemcpy(out.data(), buffer.get(), buffer.bytes(), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

CudaLongDispatchWorkload::CudaLongDispatchWorkload(AttentionShape shape)
    : shape_(checked(shape)),
      q_(shape.heads * shape.head_dim * sizeof(float)),
      k_(shape.cache_values() * kBf16Bytes),
      v_(shape.cache_values() * kBf16Bytes),
      out_(shape.heads * shape.head_dim * sizeof(float)) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> q(shape.heads * shape.head_dim);
  for (float& x : q) x = dist(rng);
  BATON_CUDA_CHECK(cudaMemcpy(q_.get(), q.data(), q_.bytes(), cudaMemcpyHostToDevice));
  BATON_CUDA_CHECK(launch_fill_bf16(nullptr, k_.get(), shape.cache_values(), 0x6b));
  BATON_CUDA_CHECK(launch_fill_bf16(nullptr, v_.get(), shape.cache_values(), 0x76));
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaLongDispatchWorkload::encode_burst(Stream& stream,
                                            const std::function<void(Boundary)>& yield_point) {
  auto& cuda_stream = dynamic_cast<CudaStream&>(stream);
  const auto* q = static_cast<const float*>(q_.get());
  auto* out = static_cast<float*>(out_.get());
  const void* k = k_.get();
  const void* v = v_.get();
  const std::size_t heads = shape_.heads;
  const std::size_t keys = shape_.keys;
  for (std::size_t layer = 0; layer < shape_.layers; ++layer) {
    stream.encode(Op{.run =
                         [=, &cuda_stream] {
                           BATON_CUDA_CHECK(launch_long_attention(cuda_stream.handle(), q, k, v,
                                                                  out, heads, keys));
                         },
                     .bytes = k_.bytes() + v_.bytes()});
    if (layer + 1 < shape_.layers) yield_point(Boundary::layer);
  }
}

CudaLongDispatchWorkload::HostCopy CudaLongDispatchWorkload::copy_back() const {
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  return {.q = floats(q_),
          .k = bf16_to_host_floats(k_),
          .v = bf16_to_host_floats(v_),
          .out = floats(out_)};
}

}  // namespace baton::cuda
