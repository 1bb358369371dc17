// int8_widening.h on the host, over every byte value in every position: the float equals
// the int8 value, and the bf16 pair holds exactly those values (every int8 is a bf16).
#include "baton/model/cuda/int8_widening.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace baton::cuda::kernels {
namespace int8_widening_test {
namespace {

float widen_bf16(std::uint32_t half) {
  const std::uint32_t bits = half << 16;
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

TEST(Int8Widening, EveryByteInEveryPositionIsItsInt8Value) {
  for (int byte = 0; byte < 256; ++byte) {
    const auto expected = static_cast<float>(static_cast<std::int8_t>(byte));
    for (int index = 0; index < 4; ++index) {
      // The other bytes hold other values, which must not leak in.
      const std::uint32_t word = (0xa5c3e17fu & ~(0xffu << (8 * index))) |
                                 (static_cast<std::uint32_t>(byte) << (8 * index));
      ASSERT_EQ(int8_to_float(word, index), expected) << "byte " << byte << " at " << index;
    }
  }
}

TEST(Int8Widening, PairsAreExactBf16InByteOrder) {
  for (int low = 0; low < 256; ++low) {
    for (const int high : {0, 1, 127, 128, 129, 255, (low * 37 + 11) % 256}) {
      for (const int index : {0, 2}) {
        const std::uint32_t word = (static_cast<std::uint32_t>(low) << (8 * index)) |
                                   (static_cast<std::uint32_t>(high) << (8 * index + 8));
        const std::uint32_t pair = int8_pair_to_bf16x2(word, index);
        ASSERT_EQ(widen_bf16(pair & 0xffffu), static_cast<float>(static_cast<std::int8_t>(low)));
        ASSERT_EQ(widen_bf16(pair >> 16), static_cast<float>(static_cast<std::int8_t>(high)));
      }
    }
  }
}

}  // namespace
}  // namespace int8_widening_test
}  // namespace baton::cuda::kernels
