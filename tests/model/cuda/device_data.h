// What the CUDA kernel tests share: random bf16 data with its exact float values (the
// reference's input), and copies to and from the device.
// Thread-safety: plain functions; each test owns its buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "skip_without_gpu.h"

namespace baton::cuda::test_data {

inline std::uint16_t bf16_bits(float value) {  // round to nearest even
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

inline float widen(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value = 0.0f;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// A random matrix in bf16, and the same values as floats for the reference.
struct Matrix {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;
};

inline Matrix random_matrix(std::size_t count, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  Matrix m;
  for (std::size_t i = 0; i < count; ++i) {
    m.bits.push_back(bf16_bits(uniform(rng)));
    m.values.push_back(widen(m.bits.back()));
  }
  return m;
}

// DeviceBuffer neither copies nor moves.
inline std::unique_ptr<DeviceBuffer> upload(const void* data, std::size_t bytes) {
  auto buffer = std::make_unique<DeviceBuffer>(bytes);
  BATON_CUDA_CHECK(cudaMemcpy(buffer->get(), data, bytes, cudaMemcpyHostToDevice));
  return buffer;
}

template <typename T>
std::vector<T> download(const DeviceBuffer& buffer, std::size_t count) {
  std::vector<T> out(count);
  BATON_CUDA_CHECK(cudaMemcpy(out.data(), buffer.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace baton::cuda::test_data
