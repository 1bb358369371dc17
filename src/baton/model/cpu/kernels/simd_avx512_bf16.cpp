// The AVX-512 BF16 kernel set: the AVX-512 set with products of bf16 weights that take
// their activations in bf16 too (vdpbf16ps: 32 products a instruction, against 16 FMAs
// after widening the weights), as llama.cpp's and PyTorch's bf16 products do. Only this
// file is built with -mavx512bf16; it borrows the rest of the AVX-512 set.
#include "baton/model/cpu/kernels/simd_kernels.h"

#if defined(__AVX512BF16__) && defined(__AVX512F__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__) && defined(__AVX512DQ__) && defined(__FMA__)
// GCC 12's AVX-512 headers read _mm512_undefined_ps() values (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace baton {
namespace {

constexpr int kPairs = 32;  // bf16 values a register

__m512bh load_bf16(const void* row, int k) {
  return reinterpret_cast<__m512bh>(_mm512_loadu_si512(static_cast<const std::uint16_t*>(row) + k));
}

// The `in - k` (< 32) values left of a row, zero beyond (a zero pair adds 0).
__m512bh load_bf16_tail(const void* row, int k, int in) {
  const auto mask = static_cast<__mmask32>((std::uint64_t{1} << (in - k)) - 1);
  return reinterpret_cast<__m512bh>(
      _mm512_maskz_loadu_epi16(mask, static_cast<const std::uint16_t*>(row) + k));
}

// Rows activation rows against Outs weight rows: Rows * Outs accumulators, each register of
// weights used Rows times and each of activations Outs times.
template <int Rows, int Outs>
void dot_block(const std::uint16_t* x, int in, const std::byte* w, int o, int out, float* y) {
  __m512 acc[Outs][Rows];
  const std::byte* row[Outs];
#pragma GCC unroll 8
  for (int i = 0; i < Outs; ++i) {
    row[i] = w + static_cast<std::size_t>(o + i) * in * 2;
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) acc[i][r] = _mm512_setzero_ps();
  }
  const auto step = [&](int k, auto load) {
    __m512bh xv[Rows];
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) xv[r] = load(x + static_cast<std::size_t>(r) * in, k);
#pragma GCC unroll 8
    for (int i = 0; i < Outs; ++i) {
      const __m512bh wv = load(row[i], k);
#pragma GCC unroll 8
      for (int r = 0; r < Rows; ++r) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], wv, xv[r]);
    }
  };
  int k = 0;
  for (; k + kPairs <= in; k += kPairs)
    step(k, [](const void* p, int at) { return load_bf16(p, at); });
  if (k < in) step(k, [in](const void* p, int at) { return load_bf16_tail(p, at, in); });
#pragma GCC unroll 8
  for (int i = 0; i < Outs; ++i) {
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      y[static_cast<std::size_t>(r) * out + o + i] = _mm512_reduce_add_ps(acc[i][r]);
    }
  }
}

// Every line prefetched into L2 4 KB ahead, as the AVX-512 set's one-row kernel does: a
// lone row streams its weights once, and needs many misses in flight.
constexpr int kPrefetchAhead = 4096;

// One activation row: the tile's weight rows, one after another in memory, read as one
// sequential stream, four independent accumulators a row.
void dot_single(const std::uint16_t* x, int in, const std::byte* w, int first, int count,
                float* y) {
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * 2;
    __m512 acc[4];
#pragma GCC unroll 4
    for (__m512& a : acc) a = _mm512_setzero_ps();
    int k = 0;
    for (; k + 4 * kPairs <= in; k += 4 * kPairs) {  // 4 lines of 64 bytes
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) {
        const std::byte* line = row + static_cast<std::size_t>(k + u * kPairs) * 2;
        _mm_prefetch(reinterpret_cast<const char*>(line + kPrefetchAhead), _MM_HINT_T1);
        acc[u] =
            _mm512_dpbf16_ps(acc[u], load_bf16(row, k + u * kPairs), load_bf16(x, k + u * kPairs));
      }
    }
    for (; k + kPairs <= in; k += kPairs) {
      acc[0] = _mm512_dpbf16_ps(acc[0], load_bf16(row, k), load_bf16(x, k));
    }
    if (k < in) {
      acc[1] = _mm512_dpbf16_ps(acc[1], load_bf16_tail(row, k, in), load_bf16_tail(x, k, in));
    }
    y[o] = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  }
}

// Blocks of 4 rows by 6 outputs (24 accumulators, 4 + 1 registers of operands: the
// fastest of 4x4, 4x6, 8x2, 8x3 and 16x1 measured on Zen 5), the rest one output at a time.
constexpr int kBlockRows = 4;
constexpr int kBlockOuts = 6;

template <int Rows>
void dot_rows(const std::uint16_t* x, int in, const std::byte* w, int first, int count, int out,
              float* y) {
  int o = first;
  for (; o + kBlockOuts <= first + count; o += kBlockOuts) {
    dot_block<Rows, kBlockOuts>(x, in, w, o, out, y);
  }
  for (; o < first + count; ++o) dot_block<Rows, 1>(x, in, w, o, out, y);
}

void dot_bf16x_rows(const std::uint16_t* x, int rows, int in, const std::byte* w, int first,
                    int count, int out, float* y) {
  if (rows == 1) return dot_single(x, in, w, first, count, y);
  for (int r = 0; r < rows; r += kBlockRows) {
    const std::uint16_t* xr = x + static_cast<std::size_t>(r) * in;
    float* yr = y + static_cast<std::size_t>(r) * out;
    switch (rows - r) {
      case 1:
        dot_rows<1>(xr, in, w, first, count, out, yr);
        break;
      case 2:
        dot_rows<2>(xr, in, w, first, count, out, yr);
        break;
      case 3:
        dot_rows<3>(xr, in, w, first, count, out, yr);
        break;
      default:
        dot_rows<kBlockRows>(xr, in, w, first, count, out, yr);
        break;
    }
  }
}

// Rounded to nearest even (vcvtne2ps2bf16), 32 at a time.
void round_to_bf16(const float* x, std::size_t n, std::uint16_t* out) {
  std::size_t i = 0;
  for (; i + 2 * 16 <= n; i += 2 * 16) {
    const __m512bh pair = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(out + i, reinterpret_cast<__m512i>(pair));
  }
  for (; i < n; i += 16) {
    const auto left = static_cast<unsigned>(n - i < 16 ? n - i : 16);
    const __mmask16 mask = static_cast<__mmask16>((1u << left) - 1);
    const __m256bh half = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(mask, x + i));
    _mm256_mask_storeu_epi16(out + i, mask, reinterpret_cast<__m256i>(half));
  }
}

}  // namespace

const SimdKernels* avx512_bf16_simd_kernels() {
  static const SimdKernels kernels = [] {
    const SimdKernels* base = avx512_simd_kernels();
    if (base == nullptr) return SimdKernels{};
    SimdKernels set = *base;
    set.name = "avx512bf16";
    set.round_to_bf16 = round_to_bf16;
    set.dot_bf16x_rows = dot_bf16x_rows;
    return set;
  }();
  return kernels.dot_bf16x_rows == nullptr ? nullptr : &kernels;
}

}  // namespace baton

#else
namespace baton {
const SimdKernels* avx512_bf16_simd_kernels() { return nullptr; }
}  // namespace baton
#endif
