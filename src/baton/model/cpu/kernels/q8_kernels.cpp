#include "baton/model/cpu/kernels/q8_kernels.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "baton/model/weights/weight_matrix.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace baton {
namespace {

constexpr int kGroup = Q8Matrix::kGroup;
constexpr int kMaxRows = 4;  // rows per pass over the weights (accumulators in registers)

// Rows [first_row, first_row + R) of x, as the kernels read them: pointers taken once, so
// that the inner loops keep them in registers.
template <int R>
struct RowBlock {
  const std::int8_t* values[R];
  const float* scales[R];
  const std::int32_t* offsets[R];
  int first_row;
  RowBlock(const Q8Activations& x, int first) : first_row(first) {
    const auto stride = static_cast<std::size_t>(x.stride());
    for (int r = 0; r < R; ++r) {
      const auto row = static_cast<std::size_t>(first + r);
      values[r] = x.values.data() + row * stride;
      scales[r] = x.scales.data() + row * x.groups;
      offsets[r] = x.lane_offsets.data() + row * stride / 4;
    }
  }
};

// The reference the vector kernels must match: per group an exact int32 dot, scaled by
// the product of both scales, summed in f32.
template <int R>
void dot_portable(const RowBlock<R>& x, const Q8Matrix& w, int first, int count, float* y) {
  const int out = w.rows();
  for (int o = first; o < first + count; ++o) {
    const std::int8_t* wq = w.row_values(o);
    const float* ws = w.row_scales(o);
    float acc[R] = {};
    for (int g = 0; g < w.groups(); ++g) {
      for (int r = 0; r < R; ++r) {
        const std::int8_t* xq = x.values[r] + g * kGroup;
        std::int32_t d = 0;
        for (int i = 0; i < kGroup; ++i) d += wq[g * kGroup + i] * xq[i];
        acc[r] += static_cast<float>(d) * (ws[g] * x.scales[r][g]);
      }
    }
    for (int r = 0; r < R; ++r) y[static_cast<std::size_t>(x.first_row + r) * out + o] = acc[r];
  }
}

#if defined(__x86_64__)

// GCC 12's AVX-512 headers start some results from a self-initialized "undefined" vector,
// which -Wmaybe-uninitialized reports once the intrinsics are inlined: a false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define BATON_Q8_AVX512 [[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]]
#define BATON_Q8_AVX2 [[gnu::target("avx2,fma")]]

// 64 bytes; `Tail`: 32 bytes and zeros, without reading past them.
template <bool Tail>
BATON_Q8_AVX512 inline __m512i load_bytes(const std::int8_t* p) {
  return Tail ? _mm512_maskz_loadu_epi8(0xffffffffULL, p) : _mm512_loadu_si512(p);
}

// The scales of groups g and g + 1 from p = &scale[g], each on the 8 lanes of its group;
// `Tail`: group g alone, the other lanes 0.
template <bool Tail>
BATON_Q8_AVX512 inline __m512 load_scale_pair(const float* p) {
  const __m512i halves = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const __m512 two = Tail ? _mm512_maskz_loadu_ps(1, p)
                          : _mm512_castps128_ps512(_mm_castsi128_ps(
                                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  return _mm512_permutexvar_ps(halves, two);
}

// Groups g and g + 1 (64 bytes) of one weight row against R rows of x; `Tail`: group g
// alone (an odd group count). vpdpbusd multiplies unsigned by signed bytes, so the weights
// get + 128 (a xor) and each int32 lane starts at its lane offset, -128 * sum(x), which
// takes that back out exactly. Lanes 0-7 hold group g's sums, 8-15 group g + 1's.
template <int R, bool Tail>
BATON_Q8_AVX512 inline void avx512_groups(const RowBlock<R>& x, const std::int8_t* wq,
                                          const float* ws, int g, __m512* acc) {
  const __m512i wv = _mm512_xor_si512(load_bytes<Tail>(wq + g * kGroup),
                                      _mm512_set1_epi8(static_cast<char>(0x80)));
  const __m512 wsv = load_scale_pair<Tail>(ws + g);
#pragma GCC unroll 4  // the R accumulators must stay in registers
  for (int r = 0; r < R; ++r) {
    const std::int32_t* offsets = x.offsets[r] + g * (kGroup / 4);
    __m512i d = Tail ? _mm512_maskz_loadu_epi32(0xff, offsets) : _mm512_loadu_si512(offsets);
    d = _mm512_dpbusd_epi32(d, wv, load_bytes<Tail>(x.values[r] + g * kGroup));
    const __m512 scale = _mm512_mul_ps(wsv, load_scale_pair<Tail>(x.scales[r] + g));
    acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, acc[r]);
  }
}

template <int R>
BATON_Q8_AVX512 void dot_avx512(const RowBlock<R>& x, const Q8Matrix& w, int first, int count,
                                float* y) {
  const int out = w.rows();
  const int groups = w.groups();
  for (int o = first; o < first + count; ++o) {
    const std::int8_t* wq = w.row_values(o);
    const float* ws = w.row_scales(o);
    __m512 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    int g = 0;
    for (; g + 2 <= groups; g += 2) avx512_groups<R, false>(x, wq, ws, g, acc);
    if (g < groups) avx512_groups<R, true>(x, wq, ws, g, acc);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      y[static_cast<std::size_t>(x.first_row + r) * out + o] = _mm512_reduce_add_ps(acc[r]);
    }
  }
}

BATON_Q8_AVX2 inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// One group per 256-bit vector. vpmaddubsw multiplies unsigned by signed bytes into
// saturating int16 pairs: |w| times x with w's sign moved onto it keeps every pair within
// 2 * 127 * 127, so nothing saturates (quantized values never reach -128).
template <int R>
BATON_Q8_AVX2 void dot_avx2(const RowBlock<R>& x, const Q8Matrix& w, int first, int count,
                            float* y) {
  const int out = w.rows();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int o = first; o < first + count; ++o) {
    const std::int8_t* wq = w.row_values(o);
    const float* ws = w.row_scales(o);
    __m256 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (int g = 0; g < w.groups(); ++g) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wq + g * kGroup));
      const __m256i magnitude = _mm256_sign_epi8(wv, wv);
      const __m256 wsv = _mm256_broadcast_ss(ws + g);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256i xv =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.values[r] + g * kGroup));
        const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(xv, wv));
        const __m256 d = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
        const __m256 scale = _mm256_mul_ps(wsv, _mm256_broadcast_ss(x.scales[r] + g));
        acc[r] = _mm256_fmadd_ps(d, scale, acc[r]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      y[static_cast<std::size_t>(x.first_row + r) * out + o] = sum_lanes(acc[r]);
    }
  }
}

#undef BATON_Q8_AVX512
#undef BATON_Q8_AVX2
#pragma GCC diagnostic pop

#endif  // __x86_64__

// One kernel for R rows: blocks them, then runs the variant.
template <int R>
void run_rows(Q8Kernel kernel, const Q8Activations& x, int first_row, const Q8Matrix& w, int first,
              int count, float* y) {
  const RowBlock<R> block(x, first_row);
  switch (kernel) {
#if defined(__x86_64__)
    case Q8Kernel::avx512_vnni:
      return dot_avx512<R>(block, w, first, count, y);
    case Q8Kernel::avx2:
      return dot_avx2<R>(block, w, first, count, y);
#endif
    default:
      return dot_portable<R>(block, w, first, count, y);
  }
}

// Rows in blocks of up to kMaxRows; each block reads the tile of weights once.
void run(Q8Kernel kernel, const Q8Activations& x, const Q8Matrix& w, int first, int count,
         float* y) {
  for (int r = 0; r < x.rows; r += kMaxRows) {
    switch (std::min(kMaxRows, x.rows - r)) {
      case 1:
        run_rows<1>(kernel, x, r, w, first, count, y);
        break;
      case 2:
        run_rows<2>(kernel, x, r, w, first, count, y);
        break;
      case 3:
        run_rows<3>(kernel, x, r, w, first, count, y);
        break;
      default:
        run_rows<4>(kernel, x, r, w, first, count, y);
    }
  }
}

void check(const Q8Activations& x, const Q8Matrix& w, int first, int count) {
  if (x.cols != w.cols()) {
    throw std::invalid_argument("q8 product of rows of " + std::to_string(x.cols) +
                                " values with a weight of " + std::to_string(w.cols()) +
                                " columns");
  }
  if (first < 0 || count < 0 || first > w.rows() - count) {
    throw std::out_of_range("q8 product of weight rows [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") of " + std::to_string(w.rows()));
  }
}

Q8Kernel detect_best() {
  for (const Q8Kernel k : {Q8Kernel::avx512_vnni, Q8Kernel::avx2}) {
    if (q8_supported(k)) return k;
  }
  return Q8Kernel::portable;
}

}  // namespace

void quantize_activations(const float* x, int rows, int cols, Q8Activations& out) {
  out.rows = rows;
  out.cols = cols;
  out.groups = (cols + kGroup - 1) / kGroup;
  const auto stride = static_cast<std::size_t>(out.stride());
  const auto n = static_cast<std::size_t>(rows);
  out.values.resize(n * stride);
  out.scales.resize(n * out.groups);
  out.lane_offsets.resize(n * stride / 4);
  for (std::size_t r = 0; r < n; ++r) {
    const float* row = x + r * cols;
    std::int8_t* q = out.values.data() + r * stride;
    for (int g = 0; g < out.groups; ++g) {
      const int begin = g * kGroup;
      out.scales[r * out.groups + g] =
          quantize_group(row + begin, std::min(kGroup, cols - begin), q + begin);
    }
    std::int32_t* offsets = out.lane_offsets.data() + r * stride / 4;
    for (std::size_t lane = 0; lane < stride / 4; ++lane) {
      const std::int8_t* v = q + lane * 4;
      offsets[lane] = -128 * (v[0] + v[1] + v[2] + v[3]);
    }
  }
}

std::string_view to_string(Q8Kernel kernel) {
  switch (kernel) {
    case Q8Kernel::avx512_vnni:
      return "avx512-vnni";
    case Q8Kernel::avx2:
      return "avx2";
    case Q8Kernel::portable:
      break;
  }
  return "portable";
}

bool q8_supported(Q8Kernel kernel) {
#if defined(__x86_64__)
  switch (kernel) {
    case Q8Kernel::avx512_vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    case Q8Kernel::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Q8Kernel::portable:
      return true;
  }
  return false;
#else
  return kernel == Q8Kernel::portable;
#endif
}

Q8Kernel q8_best_kernel() {
  static const Q8Kernel best = detect_best();  // set once (thread-safe), never changed
  return best;
}

void q8_dot_rows(const Q8Activations& x, const Q8Matrix& w, int first, int count, float* y) {
  check(x, w, first, count);
  run(q8_best_kernel(), x, w, first, count, y);
}

void q8_dot_rows(Q8Kernel kernel, const Q8Activations& x, const Q8Matrix& w, int first, int count,
                 float* y) {
  check(x, w, first, count);
  if (!q8_supported(kernel)) {
    throw std::invalid_argument("this CPU cannot run the " + std::string(to_string(kernel)) +
                                " q8 kernel");
  }
  run(kernel, x, w, first, count, y);
}

void q8_dot_rows(const float* x, int rows, const WeightMatrix& w, int first, int count, float* y) {
  thread_local Q8Activations quantized;  // per-thread scratch, reused across calls
  quantize_activations(x, rows, w.cols(), quantized);
  q8_dot_rows(quantized, w.q8(), first, count, y);
}

}  // namespace baton
