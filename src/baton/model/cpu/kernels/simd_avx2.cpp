// The AVX2+FMA kernel set (this file alone is built with -mavx2 -mfma), for CPUs without
// AVX-512. The same loops as simd_avx512.cpp on 8-float registers; the notes there apply.
#include "baton/model/cpu/kernels/simd_kernels.h"

#include "baton/model/cpu/kernels/register_count.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cstring>

namespace baton {
namespace {

constexpr int kWidth = 8;

__m256 widen_bf16(const std::byte* p) {
  const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

float reduce_add(__m256 v) {
  const __m128 half = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(half, _mm_movehl_ps(half, half));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

float bf16_at(const std::byte* row, int k) {
  std::uint16_t half;
  std::memcpy(&half, row + static_cast<std::size_t>(k) * 2, 2);
  const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

template <int Rows, int Outs>
void dot_block(const float* x, int in, const std::byte* w, int o, int out, float* y) {
  __m256 acc[Outs][Rows];
  const std::byte* row[Outs];
#pragma GCC unroll 16
  for (int i = 0; i < Outs; ++i) {
    row[i] = w + static_cast<std::size_t>(o + i) * in * 2;
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) acc[i][r] = _mm256_setzero_ps();
  }
  int k = 0;
  for (; k + kWidth <= in; k += kWidth) {
    __m256 xv[Rows];
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r)
      xv[r] = _mm256_loadu_ps(x + static_cast<std::size_t>(r) * in + k);
#pragma GCC unroll 16
    for (int i = 0; i < Outs; ++i) {
      const __m256 wv = widen_bf16(row[i] + static_cast<std::size_t>(k) * 2);
#pragma GCC unroll 16
      for (int r = 0; r < Rows; ++r) acc[i][r] = _mm256_fmadd_ps(wv, xv[r], acc[i][r]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < Outs; ++i) {
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
      const float* xr = x + static_cast<std::size_t>(r) * in;
      float sum = reduce_add(acc[i][r]);
      for (int t = k; t < in; ++t) sum += xr[t] * bf16_at(row[i], t);
      y[static_cast<std::size_t>(r) * out + o + i] = sum;
    }
  }
}

// One activation row against the tile's weight rows, which lie one after another in
// memory: read as one sequential stream (interleaving rows of a few KB would make short
// streams the prefetcher barely learns), with four accumulators and a prefetch ahead.
constexpr int kPrefetchAhead = 4096;

void dot_rows_single(const float* x, int in, const std::byte* w, int first, int count, float* y) {
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * 2;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    int k = 0;
    for (; k + 4 * kWidth <= in; k += 4 * kWidth) {
      // Both lines of the 128 bytes into L2 4 KB ahead (simd_avx512.cpp says why).
      const char* line = reinterpret_cast<const char*>(row + static_cast<std::size_t>(k) * 2);
      _mm_prefetch(line + kPrefetchAhead, _MM_HINT_T1);
      _mm_prefetch(line + kPrefetchAhead + 64, _MM_HINT_T1);
      for (int u = 0; u < 4; ++u) {
        const int at = k + u * kWidth;
        acc[u] = _mm256_fmadd_ps(widen_bf16(row + static_cast<std::size_t>(at) * 2),
                                 _mm256_loadu_ps(x + at), acc[u]);
      }
    }
    for (; k + kWidth <= in; k += kWidth) {
      acc[0] = _mm256_fmadd_ps(widen_bf16(row + static_cast<std::size_t>(k) * 2),
                               _mm256_loadu_ps(x + k), acc[0]);
    }
    float sum =
        reduce_add(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; k < in; ++k) sum += x[k] * bf16_at(row, k);
    y[o] = sum;
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
  for (int r = 0; r < rows; r += 2) {  // blocks of up to 2 rows: 8 accumulators of 16 registers
    const float* xr = x + static_cast<std::size_t>(r) * in;
    float* yr = y + static_cast<std::size_t>(r) * out;
    if (rows - r == 1) {
      dot_rows_single(xr, in, w, first, count, yr);
    } else {
      dot_rows<2>(xr, in, w, first, count, out, yr);
    }
  }
}

float dot(const float* a, const float* b, int n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int k = 0;
  for (; k + 2 * kWidth <= n; k += 2 * kWidth) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + kWidth), _mm256_loadu_ps(b + k + kWidth), acc1);
  }
  if (k + kWidth <= n) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), acc0);
    k += kWidth;
  }
  float sum = reduce_add(_mm256_add_ps(acc0, acc1));
  for (; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

void add_scaled(float a, const float* x, float* y, int n) {
  const __m256 av = _mm256_set1_ps(a);
  int k = 0;
  for (; k + kWidth <= n; k += kWidth) {
    _mm256_storeu_ps(y + k, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + k), _mm256_loadu_ps(y + k)));
  }
  for (; k < n; ++k) y[k] += a * x[k];
}

// The horizontal sums of 8 vectors as one: lane i holds the sum of v[i]'s lanes.
__m256 sum_each8(const __m256 (&v)[8]) {
  // hadd twice: per 128-bit lane, [v0 v1 v2 v3] then [v4 .. v7] of that lane's sums.
  const __m256 low = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 high = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(low, high, 0x20),
                       _mm256_permute2f128_ps(low, high, 0x31));
}

// 8 keys at a time, one accumulator each, summed across lanes together (sum_each8).
void dot_strided(const float* q, const float* k, std::size_t stride, int count, int n, float scale,
                 float* out) {
  int j = 0;
  if (n % kWidth == 0) {
    const __m256 scale_v = _mm256_set1_ps(scale);
    for (; j + 8 <= count; j += 8) {
      const float* keys = k + static_cast<std::size_t>(j) * stride;
      __m256 acc[8];
#pragma GCC unroll 16
      for (__m256& a : acc) a = _mm256_setzero_ps();
      for (int d = 0; d < n; d += kWidth) {
        const __m256 qv = _mm256_loadu_ps(q + d);
#pragma GCC unroll 16
        for (int i = 0; i < 8; ++i) {
          acc[i] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(keys + i * stride + d), acc[i]);
        }
      }
      _mm256_storeu_ps(out + j, _mm256_mul_ps(scale_v, sum_each8(acc)));
    }
  }
  for (; j < count; ++j) out[j] = scale * dot(q, k + static_cast<std::size_t>(j) * stride, n);
}

// out[0 .. Vecs * 8) += sum of p[j] * v[j], the sums held in registers across the keys.
template <int Vecs>
void add_scaled_rows(const float* p, const float* v, std::size_t stride, int count, float* out) {
  __m256 acc[Vecs];
#pragma GCC unroll 16
  for (int i = 0; i < Vecs; ++i) acc[i] = _mm256_loadu_ps(out + i * kWidth);
  for (int j = 0; j < count; ++j) {
    const float* vj = v + static_cast<std::size_t>(j) * stride;
    const __m256 pj = _mm256_set1_ps(p[j]);
#pragma GCC unroll 16
    for (int i = 0; i < Vecs; ++i)
      acc[i] = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + i * kWidth), acc[i]);
  }
#pragma GCC unroll 16
  for (int i = 0; i < Vecs; ++i) _mm256_storeu_ps(out + i * kWidth, acc[i]);
}

// Widths that are a multiple of 8 go 64 floats (8 registers) at a time through
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

// e^x as in simd_avx512.cpp; 2^n built in the exponent bits (n in [-126, 127] after the
// clamp to [-87, 88]).
__m256 exp_ps(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  for (const float c :
       {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f}) {
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
  }
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// The last n < 8 floats through the vector code, by way of a full register's copy.
template <typename Body>
void through_vector(float* s, const float* t, int n, Body body) {
  float a[kWidth] = {}, b[kWidth] = {};
  std::memcpy(a, s, static_cast<std::size_t>(n) * sizeof(float));
  if (t != nullptr) std::memcpy(b, t, static_cast<std::size_t>(n) * sizeof(float));
  body(a, b);
  std::memcpy(s, a, static_cast<std::size_t>(n) * sizeof(float));
}

float exp_shifted(float* s, int n, float shift) {
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 total = _mm256_setzero_ps();
  int k = 0;
  for (; k + kWidth <= n; k += kWidth) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + k), sh));
    _mm256_storeu_ps(s + k, e);
    total = _mm256_add_ps(total, e);
  }
  float sum = reduce_add(total);
  if (k < n) {
    through_vector(s + k, nullptr, n - k, [&](float* p, const float*) {
      _mm256_storeu_ps(p, exp_ps(_mm256_sub_ps(_mm256_loadu_ps(p), sh)));
    });
    for (; k < n; ++k) sum += s[k];
  }
  return sum;
}

double sum_exp(const float* s, std::size_t n, float shift) {
  const __m256 sh = _mm256_set1_ps(shift);
  __m256d low = _mm256_setzero_pd(), high = _mm256_setzero_pd();
  const auto add = [&](__m256 e) {
    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  };
  std::size_t k = 0;
  for (; k + kWidth <= n; k += kWidth) add(exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + k), sh)));
  if (k < n) {  // the lanes past n are masked off after the exponential
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 keep =
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - k)), lane));
    float tail[kWidth] = {};
    std::memcpy(tail, s + k, (n - k) * sizeof(float));
    add(_mm256_and_ps(keep, exp_ps(_mm256_sub_ps(_mm256_loadu_ps(tail), sh))));
  }
  const __m256d sum = _mm256_add_pd(low, high);
  double lanes[4];
  std::memcpy(lanes, &sum, sizeof lanes);
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

void silu_mul(float* gate, const float* up, std::size_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const auto step = [&](float* g, const float* u) {
    const __m256 gv = _mm256_loadu_ps(g);
    const __m256 denominator = _mm256_add_ps(one, exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), gv)));
    _mm256_storeu_ps(g, _mm256_mul_ps(_mm256_div_ps(gv, denominator), _mm256_loadu_ps(u)));
  };
  std::size_t k = 0;
  for (; k + kWidth <= n; k += kWidth) step(gate + k, up + k);
  if (k < n) through_vector(gate + k, up + k, static_cast<int>(n - k), step);
}

}  // namespace

const SimdKernels* avx2_simd_kernels() {
  static const SimdKernels kernels{.name = "avx2",
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
const SimdKernels* avx2_simd_kernels() { return nullptr; }
}  // namespace baton
#endif
