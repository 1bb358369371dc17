// finite_check: blocks of a fixed size, so that the compiler vectorizes the test at -O2
// (its cheap cost model takes only loops of a known trip count); the first bad index is
// looked for only in a block found bad.
// Thread-safety: see finite_check.h.
#include "baton/model/weights/finite_check.h"

#include <cstdint>
#include <cstring>

namespace baton {
namespace {

constexpr std::size_t kBlock = 64;

template <typename Bits, Bits kExponent>
std::optional<std::size_t> first_nonfinite_bits(const std::byte* data, std::size_t count) {
  const auto bad = [](Bits bits) { return (bits & kExponent) == kExponent; };
  Bits block[kBlock];
  std::size_t at = 0;
  for (; at + kBlock <= count; at += kBlock) {
    std::memcpy(block, data + at * sizeof(Bits), sizeof block);
    bool any = false;
    for (std::size_t i = 0; i < kBlock; ++i) any |= bad(block[i]);
    if (!any) continue;
    for (std::size_t i = 0; i < kBlock; ++i) {
      if (bad(block[i])) return at + i;
    }
  }
  for (; at < count; ++at) {
    Bits bits;
    std::memcpy(&bits, data + at * sizeof(Bits), sizeof bits);
    if (bad(bits)) return at;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> first_nonfinite_bf16(std::span<const std::byte> bytes) {
  return first_nonfinite_bits<std::uint16_t, 0x7f80>(bytes.data(), bytes.size() / 2);
}

std::optional<std::size_t> first_nonfinite(std::span<const float> values) {
  return first_nonfinite_bits<std::uint32_t, 0x7f800000>(
      reinterpret_cast<const std::byte*>(values.data()), values.size());
}

}  // namespace baton
