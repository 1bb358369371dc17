// Q8_0's int8 weights widened without a conversion instruction (an int-to-float
// conversion issues at an eighth of a float add's rate on Hopper): the byte, plus 128, is
// put into the low mantissa bits of 2^23, and 2^23 + 128 is taken away, both exactly; an
// int8's float has its low 16 bits zero, so its top half is its bf16, exactly.
// Host and device code (tested on the host: tests/model/cuda/int8_widening_test.cpp).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define BATON_HOST_DEVICE __host__ __device__
#else
#define BATON_HOST_DEVICE
#endif

namespace baton::cuda::kernels {

inline constexpr float kInt8Magic = 8388736.0f;  // 2^23 + 128

// Byte `index` (0-3) of `word`, read as an int8, as a float.
BATON_HOST_DEVICE inline float int8_to_float(std::uint32_t word, int index) {
  const std::uint32_t bits = 0x4B000000u | (((word >> (8 * index)) & 0xffu) ^ 0x80u);
  float biased = 0.0f;
  std::memcpy(&biased, &bits, sizeof biased);
  return biased - kInt8Magic;
}

// Bytes `index` and `index + 1` of `word` as a bf16 pair, byte `index` in the low half.
BATON_HOST_DEVICE inline std::uint32_t int8_pair_to_bf16x2(std::uint32_t word, int index) {
  const float low = int8_to_float(word, index);
  const float high = int8_to_float(word, index + 1);
  std::uint32_t low_bits = 0;
  std::uint32_t high_bits = 0;
  std::memcpy(&low_bits, &low, sizeof low_bits);
  std::memcpy(&high_bits, &high, sizeof high_bits);
  return (high_bits & 0xffff0000u) | (low_bits >> 16);
}

}  // namespace baton::cuda::kernels

#undef BATON_HOST_DEVICE
