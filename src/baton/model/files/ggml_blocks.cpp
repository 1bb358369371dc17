#include "baton/model/files/ggml_blocks.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "baton/model/files/gguf_file.h"
#include "baton/model/files/half.h"

namespace baton {
namespace {

// ggml.h's numbering.
enum Type : std::uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q4_K = 12,
  q5_K = 13,
  q6_K = 14,
  bf16 = 30,
};

std::uint16_t u16_at(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }
float f16_at(const std::uint8_t* p) { return f16_to_float(u16_at(p)); }
std::uint32_t u32_at(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// 32 values of 4 (q4) or 5 (q5) bits: low nibbles are values 0-15, high nibbles 16-31; the
// fifth bit of value j is bit j of `high`. value = d code + offset (offset -8 d, -16 d or m).
void nibbles32(const std::uint8_t* qs, std::uint32_t high, float d, float offset, bool subtract,
               int center, float* y) {
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0x0f) | static_cast<int>((high >> j) & 1u) << 4;
    const int hi = (qs[j] >> 4) | static_cast<int>((high >> (j + 16)) & 1u) << 4;
    if (subtract) {
      y[j] = static_cast<float>(lo - center) * d;
      y[j + 16] = static_cast<float>(hi - center) * d;
    } else {
      y[j] = static_cast<float>(lo) * d + offset;
      y[j + 16] = static_cast<float>(hi) * d + offset;
    }
  }
}

// The eight 6-bit scales and mins of a q4_K/q5_K block, packed in 12 bytes: the first four
// in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins), the last four in the nibbles of
// bytes 8-11 with their top 2 bits in the top bits of bytes 0-7.
void scales_and_mins(const std::uint8_t* s, std::array<int, 8>& scale, std::array<int, 8>& min) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = s[j] & 63;
    min[j] = s[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    scale[j] = (s[j + 4] & 0x0f) | (s[j - 4] >> 6) << 4;
    min[j] = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
  }
}

// q4_K (qh null) and q5_K: four runs of 64 values, each 32 low nibbles then 32 high nibbles
// of the same 32 bytes; q5_K's fifth bits for run c are bits 2c and 2c + 1 of qh[l].
void k_quant_4_5(const std::uint8_t* b, const std::uint8_t* qh, const std::uint8_t* qs, float* y) {
  const float d = f16_at(b);
  const float dmin = f16_at(b + 2);
  std::array<int, 8> scale{};
  std::array<int, 8> min{};
  scales_and_mins(b + 4, scale, min);
  for (int c = 0; c < 4; ++c) {
    const float d1 = d * static_cast<float>(scale[2 * c]);
    const float m1 = dmin * static_cast<float>(min[2 * c]);
    const float d2 = d * static_cast<float>(scale[2 * c + 1]);
    const float m2 = dmin * static_cast<float>(min[2 * c + 1]);
    for (int l = 0; l < 32; ++l) {
      int lo = qs[32 * c + l] & 0x0f;
      int hi = qs[32 * c + l] >> 4;
      if (qh != nullptr) {
        lo += (qh[l] >> (2 * c) & 1) << 4;
        hi += (qh[l] >> (2 * c + 1) & 1) << 4;
      }
      y[64 * c + l] = d1 * static_cast<float>(lo) - m1;
      y[64 * c + 32 + l] = d2 * static_cast<float>(hi) - m2;
    }
  }
}

// q6_K: two halves of 128 values; in each, value l (0-31) of the four runs of 32 takes
// its low 4 bits from ql (low or high nibble of byte l or l + 32) and its top 2 bits from
// bits 0-1, 2-3, 4-5, 6-7 of qh[l]; sixteen int8 scales, one per 16 values.
void k_quant_6(const std::uint8_t* b, float* y) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = f16_at(b + 208);
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (qh[l] & 3) << 4) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (qh[l] >> 2 & 3) << 4) - 32;
      const int q3 = ((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4) - 32;
      y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
    ql += 64;
    qh += 32;
    sc += 8;
    y += 128;
  }
}

void block_to_float(std::uint32_t type, const std::uint8_t* b, float* y) {
  switch (type) {
    case f32:
      std::memcpy(y, b, 4);
      return;
    case f16:
      *y = f16_at(b);
      return;
    case bf16:
      *y = bf16_to_float(u16_at(b));
      return;
    case q4_0:
      nibbles32(b + 2, 0, f16_at(b), 0, true, 8, y);
      return;
    case q4_1:
      nibbles32(b + 4, 0, f16_at(b), f16_at(b + 2), false, 0, y);
      return;
    case q5_0:
      nibbles32(b + 6, u32_at(b + 2), f16_at(b), 0, true, 16, y);
      return;
    case q5_1:
      nibbles32(b + 8, u32_at(b + 4), f16_at(b), f16_at(b + 2), false, 0, y);
      return;
    case q8_0: {
      const float d = f16_at(b);
      for (int j = 0; j < 32; ++j)
        y[j] = static_cast<float>(static_cast<std::int8_t>(b[2 + j])) * d;
      return;
    }
    case q4_K:
      k_quant_4_5(b, nullptr, b + 16, y);
      return;
    case q5_K:
      k_quant_4_5(b, b + 16, b + 48, y);
      return;
    case q6_K:
      k_quant_6(b, y);
      return;
    default:
      throw std::invalid_argument("ggml type " + std::to_string(type) + " is not supported");
  }
}

}  // namespace

// The block sizes are ggml's (gguf_file.h); this list is of the types block_to_float reads.
std::optional<GgmlBlock> ggml_block(std::uint32_t type) {
  constexpr std::uint32_t kConverted[] = {f32,  f16,  bf16, q4_0, q4_1, q5_0,
                                          q5_1, q8_0, q4_K, q5_K, q6_K};
  const GgmlTypeTraits* traits = ggml_type_traits(type);
  if (traits == nullptr ||
      std::find(std::begin(kConverted), std::end(kConverted), type) == std::end(kConverted)) {
    return std::nullopt;
  }
  return GgmlBlock{.values = static_cast<std::uint32_t>(traits->block_values),
                   .bytes = static_cast<std::uint32_t>(traits->block_bytes)};
}

bool ggml_quantized(std::uint32_t type) { return type != f32 && type != f16 && type != bf16; }

void ggml_to_float(std::uint32_t type, std::span<const std::byte> blocks, std::span<float> out) {
  const std::optional<GgmlBlock> block = ggml_block(type);
  if (!block)
    throw std::invalid_argument("ggml type " + std::to_string(type) + " is not supported");
  if (out.size() % block->values != 0 ||
      blocks.size() != out.size() / block->values * block->bytes) {
    throw std::invalid_argument("ggml blocks do not match the values asked for");
  }
  const auto* b = reinterpret_cast<const std::uint8_t*>(blocks.data());
  for (std::size_t i = 0; i < out.size(); i += block->values, b += block->bytes) {
    block_to_float(type, b, out.data() + i);
  }
}

}  // namespace baton
