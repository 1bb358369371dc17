#include "baton/model/files/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace baton {
namespace {

// f16 bit patterns worked out by hand (sign | exponent, bias 15 | 10-bit mantissa).
TEST(Half, F16HandDerivedValues) {
  EXPECT_EQ(f16_to_float(0x3C00), 1.0f);             // exponent 15 = 2^0, mantissa 0
  EXPECT_EQ(f16_to_float(0xC000), -2.0f);            // sign, exponent 16 = 2^1
  EXPECT_EQ(f16_to_float(0x7BFF), 65504.0f);         // 2^15 * (1 + 1023/1024), the largest finite
  EXPECT_EQ(f16_to_float(0x3555), 0.333251953125f);  // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(f16_to_float(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(f16_to_float(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(f16_to_float(0x8001), -std::ldexp(1.0f, -24));    // negative subnormal
  EXPECT_EQ(f16_to_float(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(f16_to_float(0x8000)));  // -0
  EXPECT_EQ(f16_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_float(0x7E00)));  // quiet NaN
  EXPECT_TRUE(std::isnan(f16_to_float(0x7C01)));  // signalling NaN pattern: still NaN
}

// Every f16 pattern against the textbook formula: (-1)^s * 2^(e-15) * (1 + m/1024) for a
// normal number, (-1)^s * 2^-14 * m/1024 for a subnormal.
TEST(Half, F16EveryPatternMatchesTheFormula) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const int exponent = static_cast<int>((bits >> 10) & 0x1F);
    const int mantissa = static_cast<int>(bits & 0x3FF);
    const float sign = (bits & 0x8000) != 0 ? -1.0f : 1.0f;
    const float value = f16_to_float(static_cast<std::uint16_t>(bits));
    if (exponent == 31) {
      EXPECT_EQ(std::isnan(value), mantissa != 0) << bits;
      if (mantissa == 0) {
        EXPECT_EQ(value, sign * std::numeric_limits<float>::infinity());
      }
      continue;
    }
    const float expected = exponent == 0
                               ? sign * std::ldexp(static_cast<float>(mantissa), -24)
                               : sign * std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
    ASSERT_EQ(value, expected) << "f16 bits 0x" << std::hex << bits;
    ASSERT_EQ(std::signbit(value), (bits & 0x8000) != 0) << bits;
  }
}

TEST(Half, Bf16IsTheTopHalfOfAnF32) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC020), -2.5f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);               // 2 * (1 + 73/128)
  EXPECT_EQ(bf16_to_float(0x0001), std::ldexp(1.0f, -133));  // f32 bits 0x00010000
  EXPECT_EQ(bf16_to_float(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_float(0xFFC0)));
}

TEST(Half, F32RoundsToTheNearestBf16WithTiesToEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.5f), 0xC020);
  // 1 + 2^-8 is halfway between 0x3F80 and 0x3F81: to the even one, 0x3F80.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 0x3F81 and 0x3F82: to the even one, 0x3F82.
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {  // every bf16 survives the round trip
    const auto b = static_cast<std::uint16_t>(bits);
    const float f = bf16_to_float(b);
    if (!std::isnan(f)) {
      EXPECT_EQ(float_to_bf16(f), b);
    }
  }
}

static_assert(f16_to_float(0x3C00) == 1.0f);
static_assert(bf16_to_float(0x3F80) == 1.0f);

}  // namespace
}  // namespace baton
