// The AMX kernel set: the AVX-512 BF16 set, plus products of many activation rows (a
// prefill chunk, a step that carries one) on the CPU's tile unit (Intel AMX-BF16: one
// tdpbf16ps multiplies a 16x32 tile of bf16 weights by 32x16 of activations, 8,192
// products, against 32 for vdpbf16ps). The weights' rows are loaded as tiles where they
// lie; the activations are laid out once per product into the tile unit's pair order
// (tile_bf16x). Only this file is built with -mamx-tile -mamx-bf16.
#include "baton/model/cpu/kernels/simd_kernels.h"

#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BF16__) && \
    defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) &&    \
    defined(__AVX512DQ__) && defined(__FMA__)
// GCC 12's AVX-512 headers read _mm512_undefined_ps() values (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "baton/model/cpu/kernels/amx_tile_config.h"

namespace baton {
namespace {

constexpr int kTile = 16;        // rows of a tile, and activation rows a B tile holds
constexpr int kTileK = 32;       // bf16 values along k a tile row holds (64 bytes)
constexpr int kTileWords = 512;  // bf16 values a tile holds

// tmm0-3 accumulate (16 outputs x 16 activation rows, f32), tmm4-5 hold weights (16
// rows x 32 values), tmm6-7 activations (16 pairs along k x 16 rows).
void configure_tiles() {
  static constexpr AmxTileConfig kConfig = full_tiles_config();
  _tile_loadconfig(&kConfig);
}

// Lane i holds i * stride: the offsets of a gather of 16 values `stride` apart.
__m512i lane_offsets(int stride) {
  const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm512_mullo_epi32(lanes, _mm512_set1_epi32(stride));
}

int k_blocks(int in) { return (in + kTileK - 1) / kTileK; }
int row_blocks(int rows) { return (rows + kTile - 1) / kTile; }

std::size_t tiled_bf16x_size(int rows, int in) {
  return static_cast<std::size_t>(row_blocks(rows)) * k_blocks(in) * kTileWords;
}

// Tile (row block b, k block kb) at tiled[(b * k_blocks + kb) * 512]: its row p holds, for
// each of the block's 16 activation rows n, the pair x[n][kb*32 + 2p], x[n][kb*32 + 2p + 1]
// (zeros past the rows and past `in`).
void tile_bf16x(const std::uint16_t* x, int rows, int in, std::uint16_t* tiled) {
  const int blocks = k_blocks(in);
  const __m512i row_starts = lane_offsets(in);
  for (int b = 0; b < row_blocks(rows); ++b) {
    const int valid = std::min(kTile, rows - b * kTile);
    const auto row_mask = static_cast<__mmask16>((1u << valid) - 1);
    const std::uint16_t* base = x + static_cast<std::size_t>(b) * kTile * in;
    for (int kb = 0; kb < blocks; ++kb) {
      std::uint16_t* tile = tiled + (static_cast<std::size_t>(b) * blocks + kb) * kTileWords;
      for (int p = 0; p < kTile; ++p) {
        const int k = kb * kTileK + 2 * p;
        std::uint32_t* out = reinterpret_cast<std::uint32_t*>(tile) + p * kTile;
        if (k + 1 < in) {  // both values of the pair: one gather of 16 rows' pairs
          const __m512i at = _mm512_add_epi32(row_starts, _mm512_set1_epi32(k));
          _mm512_storeu_si512(
              out, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), row_mask, at, base, 2));
          continue;
        }
        for (int n = 0; n < kTile; ++n) {  // the last odd value, or past `in`
          const std::uint32_t low =
              n < valid && k < in ? base[static_cast<std::size_t>(n) * in + k] : 0;
          out[n] = low;
        }
      }
    }
  }
}

// Weight rows o..o+16*As of `in` bf16 values at w, against activation row blocks b..b+Bs:
// y[row][o + i] for the rows below `rows`. `tails` holds each A tile's last k block,
// zero-padded, where `in` is not a multiple of 32 (a tile load past the row would read the
// next row, or past the matrix).
template <int As, int Bs>
void tile_block(const std::uint16_t* tiled, int rows, int in, const std::byte* w, int o, int b,
                const std::uint16_t* tails, int out, float* y) {
  const int blocks = k_blocks(in);
  const int full = in / kTileK;
  const auto stride = static_cast<long>(in) * 2;
  _tile_zero(0);
  if constexpr (Bs > 1) _tile_zero(1);
  if constexpr (As > 1) _tile_zero(2);
  if constexpr (As > 1 && Bs > 1) _tile_zero(3);
  const std::byte* rows_at = w + static_cast<std::size_t>(o) * in * 2;
  for (int kb = 0; kb < blocks; ++kb) {
    if (kb < full) {
      _tile_loadd(4, rows_at + static_cast<std::size_t>(kb) * kTileK * 2, stride);
      if constexpr (As > 1) {
        _tile_loadd(5, rows_at + (static_cast<std::size_t>(kTile) * in + kb * kTileK) * 2, stride);
      }
    } else {
      _tile_loadd(4, tails, 64);
      if constexpr (As > 1) _tile_loadd(5, tails + kTileWords, 64);
    }
    const std::uint16_t* x_at = tiled + (static_cast<std::size_t>(b) * blocks + kb) * kTileWords;
    _tile_loadd(6, x_at, 64);
    if constexpr (Bs > 1) _tile_loadd(7, x_at + static_cast<std::size_t>(blocks) * kTileWords, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (Bs > 1) _tile_dpbf16ps(1, 4, 7);
    if constexpr (As > 1) _tile_dpbf16ps(2, 5, 6);
    if constexpr (As > 1 && Bs > 1) _tile_dpbf16ps(3, 5, 7);
  }
  // Accumulator (a, bb): outputs o + 16a + i (its rows) by activation rows 16(b + bb) + n.
  alignas(64) float c[4][kTile][kTile];
  _tile_stored(0, c[0], 64);
  if constexpr (Bs > 1) _tile_stored(1, c[1], 64);
  if constexpr (As > 1) _tile_stored(2, c[2], 64);
  if constexpr (As > 1 && Bs > 1) _tile_stored(3, c[3], 64);
  // Column n of an accumulator is activation row n's 16 outputs: one gather each.
  const __m512i column = lane_offsets(kTile);
  for (int a = 0; a < As; ++a) {
    for (int bb = 0; bb < Bs; ++bb) {
      const float* acc = &c[a * 2 + bb][0][0];
      const int first_row = (b + bb) * kTile;
      const int valid = std::min(kTile, rows - first_row);
      for (int n = 0; n < valid; ++n) {
        float* yr = y + static_cast<std::size_t>(first_row + n) * out + o + a * kTile;
        _mm512_storeu_ps(yr, _mm512_i32gather_ps(column, acc + n, 4));
      }
    }
  }
}

// The last k block of weight rows o..o+16*As, zero-padded to 32 values a row.
void copy_tails(const std::byte* w, int in, int o, int as, std::uint16_t* tails) {
  const int full = in / kTileK * kTileK;
  std::memset(tails, 0, static_cast<std::size_t>(as) * kTileWords * 2);
  for (int i = 0; i < as * kTile; ++i) {
    std::memcpy(tails + static_cast<std::size_t>(i) * kTileK,
                w + (static_cast<std::size_t>(o + i) * in + full) * 2,
                static_cast<std::size_t>(in - full) * 2);
  }
}

template <int As>
void tile_outputs(const std::uint16_t* tiled, int rows, int in, const std::byte* w, int o, int out,
                  float* y) {
  alignas(64) std::uint16_t tails[2 * kTileWords];
  if (in % kTileK != 0) copy_tails(w, in, o, As, tails);
  const int blocks = row_blocks(rows);
  int b = 0;
  for (; b + 2 <= blocks; b += 2) tile_block<As, 2>(tiled, rows, in, w, o, b, tails, out, y);
  if (b < blocks) tile_block<As, 1>(tiled, rows, in, w, o, b, tails, out, y);
}

void dot_tiled_bf16x_rows(const std::uint16_t* tiled, const std::uint16_t* x, int rows, int in,
                          const std::byte* w, int first, int count, int out, float* y) {
  configure_tiles();
  int o = first;
  for (; o + 2 * kTile <= first + count; o += 2 * kTile) {
    tile_outputs<2>(tiled, rows, in, w, o, out, y);
  }
  if (o + kTile <= first + count) {
    tile_outputs<1>(tiled, rows, in, w, o, out, y);
    o += kTile;
  }
  _tile_release();
  // The last outputs (fewer than a tile's 16) by the AVX-512 BF16 set.
  if (o < first + count) {
    avx512_bf16_simd_kernels()->dot_bf16x_rows(x, rows, in, w, o, first + count - o, out, y);
  }
}

}  // namespace

const SimdKernels* amx_bf16_simd_kernels() {
  static const SimdKernels kernels = [] {
    const SimdKernels* base = avx512_bf16_simd_kernels();
    if (base == nullptr) return SimdKernels{};
    SimdKernels set = *base;
    set.name = "amxbf16";
    set.tiled_bf16x_size = tiled_bf16x_size;
    set.tile_bf16x = tile_bf16x;
    set.dot_tiled_bf16x_rows = dot_tiled_bf16x_rows;
    return set;
  }();
  return kernels.dot_tiled_bf16x_rows == nullptr ? nullptr : &kernels;
}

}  // namespace baton

#else
namespace baton {
const SimdKernels* amx_bf16_simd_kernels() { return nullptr; }
}  // namespace baton
#endif
