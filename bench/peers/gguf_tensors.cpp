// Row-by-row re-encoding of safetensors tensors into ggml types (gguf_tensors.h).
#include "gguf_tensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>

#include "baton/model/files/half.h"

namespace baton::peers {
namespace {

template <typename T>
void write_values(std::ostream& out, std::span<const T> values) {
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size_bytes()));
}

void write_f16_row(std::ostream& out, std::span<const float> row) {
  std::vector<std::uint16_t> bits(row.size());
  std::transform(row.begin(), row.end(), bits.begin(), float_to_f16);
  write_values<std::uint16_t>(out, bits);
}

void write_bf16_row(std::ostream& out, std::span<const float> row) {
  std::vector<std::uint16_t> bits(row.size());
  std::transform(row.begin(), row.end(), bits.begin(), [](float v) { return float_to_bf16(v); });
  write_values<std::uint16_t>(out, bits);
}

// Per block of 32: the f16 scale, then the 32 quantised values; the row in one write.
void write_q8_0_row(std::ostream& out, std::span<const float> row) {
  constexpr std::size_t kBlock = 32;
  std::vector<char> bytes;
  bytes.reserve(row.size() / kBlock * (2 + kBlock));
  for (std::size_t first = 0; first < row.size(); first += kBlock) {
    const std::span<const float> block = row.subspan(first, kBlock);
    float max_abs = 0.0f;
    for (float v : block) max_abs = std::max(max_abs, std::fabs(v));
    const float scale = max_abs / 127.0f;
    const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
    const auto scale_bits = std::bit_cast<std::array<char, 2>>(float_to_f16(scale));
    bytes.insert(bytes.end(), scale_bits.begin(), scale_bits.end());
    for (float v : block) bytes.push_back(static_cast<char>(std::lround(v * inverse)));
  }
  write_values<char>(out, bytes);
}

void write_row(std::ostream& out, GgmlType type, std::span<const float> row) {
  switch (type) {
    case GgmlType::f32:
      return write_values(out, row);
    case GgmlType::f16:
      return write_f16_row(out, row);
    case GgmlType::bf16:
      return write_bf16_row(out, row);
    case GgmlType::q8_0:
      return write_q8_0_row(out, row);
  }
}

}  // namespace

std::uint16_t float_to_f16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;  // NaN: a quiet one
  // From 65520 up (halfway past the largest finite f16, 65504) everything rounds to infinity.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {  // below 2^-14: an f16 subnormal (or zero), units of 2^-24
    const float units = std::nearbyint(std::bit_cast<float>(magnitude) * 0x1p24f);  // ties even
    return sign | static_cast<std::uint16_t>(units);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to
  // nearest even; a carry out of the mantissa correctly bumps the exponent.
  const std::uint32_t rebased = magnitude - (112u << 23);
  const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return sign | static_cast<std::uint16_t>(rounded >> 13);
}

std::vector<std::int64_t> interleaved_rope_rows(std::int64_t heads, std::int64_t head_dim) {
  std::vector<std::int64_t> rows;
  rows.reserve(static_cast<std::size_t>(heads * head_dim));
  const std::int64_t half = head_dim / 2;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t r = 0; r < head_dim; ++r) {
      // Output pair (2i, 2i+1) takes HF's elements i and i + d/2 of the same head.
      rows.push_back(h * head_dim + (r % 2) * half + r / 2);
    }
  }
  return rows;
}

void write_tensor(std::ostream& out, const TensorView& tensor, GgmlType type,
                  const std::vector<std::int64_t>& rows) {
  const std::size_t count = tensor.element_count();
  std::size_t columns = tensor.shape.size() >= 2 ? static_cast<std::size_t>(tensor.shape.back())
                                                 : (rows.empty() ? count : 1);
  if (columns == 0) columns = 1;
  const std::size_t row_count = count / columns;
  if (!rows.empty() && rows.size() != row_count) {
    throw std::invalid_argument(tensor.name + ": " + std::to_string(row_count) +
                                " rows, permutation of " + std::to_string(rows.size()));
  }
  std::vector<float> row(columns);
  for (std::size_t r = 0; r < row_count; ++r) {
    const std::size_t source = rows.empty() ? r : static_cast<std::size_t>(rows[r]);
    to_float(tensor, source * columns, row);
    write_row(out, type, row);
  }
}

}  // namespace baton::peers
