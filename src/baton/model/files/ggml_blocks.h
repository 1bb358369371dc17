// ggml's tensor types as GGUF files store them, and their conversion to float.
// A row of C values is C / block_size blocks of block_bytes bytes (f32, f16, bf16: blocks of
// one value). The quantized blocks (little-endian; d, m, dmin are f16):
//   q4_0 (32 values):  d, 16 bytes of 4-bit codes: value j = d (q - 8), low nibbles first
//   q4_1 (32):         d, m, 16 bytes: value = d q + m
//   q5_0 (32):         d, 32 high bits (u32), 16 bytes of low nibbles: d (q - 16)
//   q5_1 (32):         d, m, high bits, low nibbles: d q + m
//   q8_0 (32):         d, 32 int8: d q
//   q4_K (256):        d, dmin, 12 bytes of eight 6-bit scales and mins, 128 bytes of
//                      nibbles: sub-block s of 32 values = d sc_s q - dmin m_s
//   q5_K (256):        as q4_K with 32 bytes of high bits before the nibbles
//   q6_K (256):        128 bytes of low nibbles, 64 of 2-bit highs, 16 int8 scales, d:
//                      value = d sc (q - 32), sixteen sub-blocks of 16
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace baton {

inline constexpr std::uint32_t kGgmlQ8_0 = 8;  // ggml's type id of q8_0

struct GgmlBlock {
  std::uint32_t values = 1;  // per block
  std::uint32_t bytes = 4;   // per block
};

// The block of a ggml type this reader converts; nullopt for any other.
std::optional<GgmlBlock> ggml_block(std::uint32_t type);

// Whether the type stores codes (not plain f32/f16/bf16 values).
bool ggml_quantized(std::uint32_t type);

// Converts `out.size()` values (a whole number of blocks) of `type` from `blocks` (exactly
// their bytes) to float. std::invalid_argument for a type ggml_block does not know or sizes
// that do not match.
void ggml_to_float(std::uint32_t type, std::span<const std::byte> blocks, std::span<float> out);

}  // namespace baton
