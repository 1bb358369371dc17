// The AVX2+FMA kernel set (this file alone is built with -mavx2 -mfma), for CPUs without
// AVX-512. The same loops as simd_avx512.cpp on 8-float registers; the notes there apply.
#include "baton/model/cpu/simd_kernels.h"

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
  for (int i = 0; i < Outs; ++i) {
    row[i] = w + static_cast<std::size_t>(o + i) * in * 2;
    for (int r = 0; r < Rows; ++r) acc[i][r] = _mm256_setzero_ps();
  }
  int k = 0;
  for (; k + kWidth <= in; k += kWidth) {
    __m256 xv[Rows];
    for (int r = 0; r < Rows; ++r)
      xv[r] = _mm256_loadu_ps(x + static_cast<std::size_t>(r) * in + k);
    for (int i = 0; i < Outs; ++i) {
      const __m256 wv = widen_bf16(row[i] + static_cast<std::size_t>(k) * 2);
      for (int r = 0; r < Rows; ++r) acc[i][r] = _mm256_fmadd_ps(wv, xv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < Outs; ++i) {
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
void dot_rows_single(const float* x, int in, const std::byte* w, int first, int count, float* y) {
  for (int o = first; o < first + count; ++o) {
    const std::byte* row = w + static_cast<std::size_t>(o) * in * 2;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    int k = 0;
    for (; k + 4 * kWidth <= in; k += 4 * kWidth) {
      _mm_prefetch(reinterpret_cast<const char*>(row + static_cast<std::size_t>(k) * 2 + 1024),
                   _MM_HINT_T0);
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

void dot_strided(const float* q, const float* k, std::size_t stride, int count, int n, float scale,
                 float* out) {
  for (int j = 0; j < count; ++j)
    out[j] = scale * dot(q, k + static_cast<std::size_t>(j) * stride, n);
}

void add_scaled_strided(const float* p, const float* v, std::size_t stride, int count, int n,
                        float* out) {
  for (int j = 0; j < count; ++j)
    add_scaled(p[j], v + static_cast<std::size_t>(j) * stride, out, n);
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
  static const SimdKernels kernels{"avx2",      dot_bf16_rows,      dot,         add_scaled,
                                   dot_strided, add_scaled_strided, exp_shifted, silu_mul};
  return &kernels;
}

}  // namespace baton

#else
namespace baton {
const SimdKernels* avx2_simd_kernels() { return nullptr; }
}  // namespace baton
#endif
