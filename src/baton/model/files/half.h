// bf16 and IEEE-754 binary16 (f16) to f32, bit-exact: every bf16 and every f16 value
// (zeros, subnormals, infinities, NaNs) has an exact f32, so no rounding happens here.
// And f32 to bf16, rounded to nearest even as torch's .to(bfloat16) does.
//   bf16: the top 16 bits of an f32.
//   f16:  1 sign, 5 exponent (bias 15), 10 mantissa bits; exponent 0 is zero or a
//         subnormal (mantissa * 2^-24), exponent 31 is infinity (mantissa 0) or NaN.
// Thread-safety: pure constexpr functions.
#pragma once

#include <bit>
#include <cstdint>

namespace baton {

constexpr float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// Round to nearest even; a NaN stays a (quiet) NaN.
constexpr std::uint16_t float_to_bf16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

constexpr float f16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in f32
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {  // infinity or NaN (the payload is kept)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  // Normal: rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace baton
