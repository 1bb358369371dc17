// The AVX-512 kernel set (F, BW, VL, DQ; this file alone is built with those -m flags).
// bf16 weights are widened in registers: zero-extended to 32 bits and shifted into an
// f32's top half. Only intrinsics and plain loops here: an inline library function
// compiled with these flags could be picked by the linker for code that runs anywhere.
#include "baton/model/cpu/kernels/simd_kernels.h"

#include "baton/model/cpu/kernels/register_count.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__FMA__)
// GCC 12's AVX-512 headers read _mm512_undefined_ps() values, which its own warnings then
// call uninitialized (GCC bug 105593); nothing here reads an undefined register.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

namespace baton {
namespace {

constexpr int kWidth = 16;

__m512 widen_bf16(const std::byte* p) {
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

float bf16_at(const std::byte* row, int k) {
  std::uint16_t half;
  std::memcpy(&half, row + static_cast<std::size_t>(k) * 2, 2);
  const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Outs weight rows against Rows activation rows: Outs * Rows accumulators, each weight
// widened once and used Rows times.
template <int Rows, int Outs>
void dot_block(const float* x, int in, const std::byte* w, int o, int out, float* y) {
  __m512 acc[Outs][Rows];
  const std::byte* row[Outs];
#pragma GCC unroll 16
  for (int i = 0; i < Outs; ++i) {
    row[i] = w + static_cast<std::size_t>(o + i) * in * 2;
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) acc[i][r] = _mm512_setzero_ps();
  }
  int k = 0;
  for (; k + kWidth <= in; k += kWidth) {
    __m512 xv[Rows];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r)
      xv[r] = _mm512_loadu_ps(x + static_cast<std::size_t>(r) * in + k);
#pragma GCC unroll 16
    for (int i = 0; i < Outs; ++i) {
      const __m512 wv = widen_bf16(row[i] + static_cast<std::size_t>(k) * 2);
#pragma GCC unroll 16
      for (int r = 0; r < Rows; ++r) acc[i][r] = _mm512_fmadd_ps(wv, xv[r], acc[i][r]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < Outs; ++i) {
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
      const float* xr = x + static_cast<std::size_t>(r) * in;
      float sum = _mm512_reduce_add_ps(acc[i][r]);
      for (int t = k; t < in; ++t) sum += xr[t] * bf16_at(row[i], t);
      y[static_cast<std::size_t>(r) * out + o + i] = sum;
    }
  }
}

// One activation row against the tile's weight rows, which lie one after another in
// memory: read as one sequential stream (interleaving rows of a few KB would make short
// streams the prefetcher barely learns). Each 64-byte load holds 16 pairs of bf16; the
// even ones become f32 by a shift, the odd ones by a mask (no shuffles), against x split
// the same way once per call. Rows of another shape take the widening path.
constexpr int kMaxPairedIn = 16384;
// Every line is prefetched into L2 4 KB ahead: the loads' dependent shifts and FMAs fill
// the scheduler before enough misses are in flight, so with every other line prefetched
// 1 KB ahead the product streamed at 65 % of a plain read; now at 90-100 %.
constexpr int kPrefetchAhead = 4096;

void dot_rows_single(const float* x, int in, const std::byte* w, int first, int count, float* y) {
  if (in % (2 * kWidth) != 0 || in > kMaxPairedIn) {
    for (int o = first; o < first + count; ++o) dot_block<1, 1>(x, in, w, o, 0, y);
    return;
  }
  alignas(64) float split[kMaxPairedIn];  // per 32: the 16 even x, then the 16 odd
  for (int k = 0; k < in; k += 2 * kWidth) {
    for (int i = 0; i < kWidth; ++i) {
      split[k + i] = x[k + 2 * i];
      split[k + kWidth + i] = x[k + 2 * i + 1];
    }
  }
  const __m512i odd_mask = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  auto pair_fma = [&](const std::byte* row, int at, __m512& even_acc, __m512& odd_acc) {
    const __m512i pairs = _mm512_loadu_si512(row + static_cast<std::size_t>(at) * 2);
    const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16));
    const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(pairs, odd_mask));
    even_acc = _mm512_fmadd_ps(even, _mm512_load_ps(split + at), even_acc);
    odd_acc = _mm512_fmadd_ps(odd, _mm512_load_ps(split + at + kWidth), odd_acc);
  };
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * 2;
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) acc[i] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 8 * kWidth <= in; k += 8 * kWidth) {  // 4 lines of 64 bytes
      const std::byte* line = row + static_cast<std::size_t>(k) * 2;
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) {
        _mm_prefetch(reinterpret_cast<const char*>(line + kPrefetchAhead + 64 * u), _MM_HINT_T1);
        pair_fma(row, k + u * 2 * kWidth, acc[2 * u], acc[2 * u + 1]);
      }
    }
    for (; k < in; k += 2 * kWidth) pair_fma(row, k, acc[0], acc[1]);
#pragma GCC unroll 8
    for (int i = 1; i < 8; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
    y[o] = _mm512_reduce_add_ps(acc[0]);
  }
}

template <int Rows>
void dot_rows(const float* x, int in, const std::byte* w, int first, int count, int out, float* y) {
  int o = first;
  for (; o + 4 <= first + count; o += 4) dot_block<Rows, 4>(x, in, w, o, out, y);
  for (; o < first + count; ++o) dot_block<Rows, 1>(x, in, w, o, out, y);
}

void dot_bf16_rows(const float* x, int rows, int in, const std::byte* w, int first, int count,
                   int out, float* y) {
  for (int r = 0; r < rows; r += 4) {  // blocks of up to 4 rows
    const float* xr = x + static_cast<std::size_t>(r) * in;
    float* yr = y + static_cast<std::size_t>(r) * out;
    switch (rows - r) {
      case 1:
        dot_rows_single(xr, in, w, first, count, yr);
        break;
      case 2:
        dot_rows<2>(xr, in, w, first, count, out, yr);
        break;
      case 3:
        dot_rows<3>(xr, in, w, first, count, out, yr);
        break;
      default:
        dot_rows<4>(xr, in, w, first, count, out, yr);
        break;
    }
  }
}

float dot(const float* a, const float* b, int n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int k = 0;
  for (; k + 2 * kWidth <= n; k += 2 * kWidth) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k + kWidth), _mm512_loadu_ps(b + k + kWidth), acc1);
  }
  if (k + kWidth <= n) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc0);
    k += kWidth;
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  for (; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void add_scaled(float a, const float* x, float* y, int n) {
  const __m512 av = _mm512_set1_ps(a);
  int k = 0;
  for (; k + kWidth <= n; k += kWidth) {
    _mm512_storeu_ps(y + k, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + k), _mm512_loadu_ps(y + k)));
  }
  for (; k < n; ++k) y[k] += a * x[k];
}

// The horizontal sums of 16 vectors as one: lane i holds the sum of v[i]'s lanes. Pairs
// are folded within 128-bit lanes, then the lanes across registers (45 operations for 16
// sums, against about 8 each for one at a time).
__m512 sum_each16(const __m512 (&v)[16]) {
  __m512 pairs[8];  // per 128-bit lane: [v0 02, v1 02, v0 13, v1 13] of v[2i], v[2i+1]
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i) {
    pairs[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                             _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  __m512 quads[4];  // per 128-bit lane l: that lane's sums of v[4i .. 4i + 3]
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(pairs[2 * i]), b = _mm512_castps_pd(pairs[2 * i + 1]);
    quads[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  const auto fold = [](__m512 a, __m512 b) {  // [a 0+1, a 2+3, b 0+1, b 2+3] by 128-bit lane
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xdd));
  };
  return fold(fold(quads[0], quads[1]), fold(quads[2], quads[3]));
}

// 16 keys at a time, one accumulator each, summed across lanes together (sum_each16).
void dot_strided(const float* q, const float* k, std::size_t stride, int count, int n, float scale,
                 float* out) {
  int j = 0;
  if (n % kWidth == 0) {
    const __m512 scale_v = _mm512_set1_ps(scale);
    for (; j + 16 <= count; j += 16) {
      const float* keys = k + static_cast<std::size_t>(j) * stride;
      __m512 acc[16];
#pragma GCC unroll 16
      for (__m512& a : acc) a = _mm512_setzero_ps();
      for (int d = 0; d < n; d += kWidth) {
        const __m512 qv = _mm512_loadu_ps(q + d);
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
          acc[i] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(keys + i * stride + d), acc[i]);
        }
      }
      _mm512_storeu_ps(out + j, _mm512_mul_ps(scale_v, sum_each16(acc)));
    }
  }
  for (; j < count; ++j) out[j] = scale * dot(q, k + static_cast<std::size_t>(j) * stride, n);
}

// out[0 .. Vecs * 16) += sum of p[j] * v[j]: the sums stay in registers, in two sets (even
// and odd j) so that consecutive FMAs do not wait on each other.
template <int Vecs>
void add_scaled_rows(const float* p, const float* v, std::size_t stride, int count, float* out) {
  __m512 even[Vecs], odd[Vecs];
#pragma GCC unroll 16
  for (int i = 0; i < Vecs; ++i) {
    even[i] = _mm512_loadu_ps(out + i * kWidth);
    odd[i] = _mm512_setzero_ps();
  }
  int j = 0;
  for (; j + 2 <= count; j += 2) {
    const float* v0 = v + static_cast<std::size_t>(j) * stride;
    const __m512 p0 = _mm512_set1_ps(p[j]), p1 = _mm512_set1_ps(p[j + 1]);
#pragma GCC unroll 16
    for (int i = 0; i < Vecs; ++i) {
      even[i] = _mm512_fmadd_ps(p0, _mm512_loadu_ps(v0 + i * kWidth), even[i]);
      odd[i] = _mm512_fmadd_ps(p1, _mm512_loadu_ps(v0 + stride + i * kWidth), odd[i]);
    }
  }
  if (j < count) {
    const float* v0 = v + static_cast<std::size_t>(j) * stride;
    const __m512 p0 = _mm512_set1_ps(p[j]);
#pragma GCC unroll 16
    for (int i = 0; i < Vecs; ++i)
      even[i] = _mm512_fmadd_ps(p0, _mm512_loadu_ps(v0 + i * kWidth), even[i]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < Vecs; ++i) _mm512_storeu_ps(out + i * kWidth, _mm512_add_ps(even[i], odd[i]));
}

// Widths that are a multiple of 16 go 128 floats (8 registers) at a time through
// add_scaled_rows; others key by key.
void add_scaled_strided(const float* p, const float* v, std::size_t stride, int count, int n,
                        float* out) {
  if (n % kWidth != 0) {
    for (int j = 0; j < count; ++j)
      add_scaled(p[j], v + static_cast<std::size_t>(j) * stride, out, n);
    return;
  }
  for (int d = 0; d < n; d += 8 * kWidth) {
    const int left = (n - d) / kWidth;
    with_register_count(left < 8 ? left : 8, [&](auto registers) {
      add_scaled_rows<decltype(registers)::value>(p, v + d, stride, count, out + d);
    });
  }
}

// e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by its Taylor polynomial of degree 7
// (truncation below 6e-9), times 2^n by scalef. Arguments are clamped to [-87, 88].
__m512 exp_ps(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  for (const float c :
       {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f}) {
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
  }
  return _mm512_scalef_ps(p, n);
}

// The last n < 16 floats through the vector code, by way of a full register's copy.
template <typename Body>
void through_vector(float* s, const float* t, int n, Body body) {
  float a[kWidth] = {}, b[kWidth] = {};
  std::memcpy(a, s, static_cast<std::size_t>(n) * sizeof(float));
  if (t != nullptr) std::memcpy(b, t, static_cast<std::size_t>(n) * sizeof(float));
  body(a, b, _cvtu32_mask16((1u << n) - 1u));
  std::memcpy(s, a, static_cast<std::size_t>(n) * sizeof(float));
}

float exp_shifted(float* s, int n, float shift) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512 total = _mm512_setzero_ps();
  const auto step = [&](float* p, const float*, __mmask16 keep) {
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_loadu_ps(p), sh));
    _mm512_storeu_ps(p, e);
    total = _mm512_mask_add_ps(total, keep, total, e);
  };
  int k = 0;
  for (; k + kWidth <= n; k += kWidth) step(s + k, nullptr, _cvtu32_mask16(0xffffu));
  if (k < n) through_vector(s + k, nullptr, n - k, step);
  return _mm512_reduce_add_ps(total);
}

double sum_exp(const float* s, std::size_t n, float shift) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
  const auto add = [&](__m512 e) {
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
  };
  std::size_t k = 0;
  for (; k + kWidth <= n; k += kWidth) add(exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s + k), sh)));
  if (k < n) {
    const __mmask16 keep = _cvtu32_mask16((1u << (n - k)) - 1u);
    add(_mm512_maskz_mov_ps(keep, exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(keep, s + k), sh))));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(low, high));
}

void silu_mul(float* gate, const float* up, std::size_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const auto step = [&](float* g, const float* u, __mmask16) {
    const __m512 gv = _mm512_loadu_ps(g);
    const __m512 denominator = _mm512_add_ps(one, exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), gv)));
    _mm512_storeu_ps(g, _mm512_mul_ps(_mm512_div_ps(gv, denominator), _mm512_loadu_ps(u)));
  };
  std::size_t k = 0;
  for (; k + kWidth <= n; k += kWidth) step(gate + k, up + k, 0);
  if (k < n) through_vector(gate + k, up + k, static_cast<int>(n - k), step);
}

}  // namespace

const SimdKernels* avx512_simd_kernels() {
  static const SimdKernels kernels{.name = "avx512",
                                   .dot_bf16_rows = dot_bf16_rows,
                                   .dot = dot,
                                   .add_scaled = add_scaled,
                                   .dot_strided = dot_strided,
                                   .add_scaled_strided = add_scaled_strided,
                                   .exp_shifted = exp_shifted,
                                   .silu_mul = silu_mul,
                                   .sum_exp = sum_exp,
                                   .round_to_bf16 = nullptr,
                                   .dot_bf16x_rows = nullptr};
  return &kernels;
}

}  // namespace baton

#else
namespace baton {
const SimdKernels* avx512_simd_kernels() { return nullptr; }
}  // namespace baton
#endif
