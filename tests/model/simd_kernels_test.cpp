// Every kernel set this CPU runs (model/cpu/simd_*.cpp) against plain float64 references,
// at tolerances stated with each test; shapes include tails that fill no whole register.
#include "baton/model/cpu/kernels/simd_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/model/files/half.h"

namespace baton {
namespace {

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float low = -1.0f,
                                 float high = 1.0f) {
  std::uniform_real_distribution<float> d(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(SimdKernels, ThePortableSetIsAlwaysThereAndTheChosenOneIsTheLast) {
  const auto sets = supported_simd_kernels();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front()->name, "scalar");
  if (std::getenv("BATON_CPU_ISA") == nullptr) {
    EXPECT_EQ(&simd_kernels(), sets.back());
  }
  // The tests of the bf16 pair products and the tiles below run wherever the CPU has them.
  if (amx_bf16_simd_kernels() != nullptr && cpu_runs_amx_bf16()) {
    EXPECT_EQ(sets.back()->name, "amxbf16");
  } else if (avx512_bf16_simd_kernels() != nullptr && cpu_runs_avx512_bf16()) {
    EXPECT_EQ(sets.back()->name, "avx512bf16");
  }
}

// `count` random bf16 values, and the same at an odd address, as a file may hold them.
struct Bf16Values {
  std::vector<std::uint16_t> bits;
  std::vector<std::byte> bytes;  // bits, one byte in
  const std::byte* odd() const { return bytes.data() + 1; }
};

Bf16Values random_bf16(std::size_t count, std::mt19937& rng) {
  Bf16Values v;
  v.bits.resize(count);
  for (std::uint16_t& b : v.bits) b = float_to_bf16(random_floats(1, rng)[0]);
  v.bytes.resize(count * 2 + 1);
  std::memcpy(v.bytes.data() + 1, v.bits.data(), count * 2);
  return v;
}

// The output columns a product computes: [first, first + count) of out.
struct Columns {
  int out, first, count;
};
constexpr Columns kColumns{.out = 23, .first = 3, .count = 13};  // 13: two blocks of 6 and one left
constexpr float kUntouched = -7.0f;

// y (rows x out, filled with kUntouched before) against float64 sums of x (the values the
// kernel multiplies) times w: within 1e-5 of the sum of the terms' magnitudes (f32 sums of
// a few thousand terms), and the columns outside [first, first + count) untouched.
void expect_products(std::string_view set, const std::vector<float>& x,
                     const std::vector<std::uint16_t>& w, int rows, int in,
                     const std::vector<float>& y, Columns columns = kColumns) {
  const auto [out, first, count] = columns;
  for (int r = 0; r < rows; ++r) {
    for (int o = 0; o < out; ++o) {
      const float got = y[static_cast<std::size_t>(r) * out + o];
      if (o < first || o >= first + count) {
        EXPECT_EQ(got, kUntouched);
        continue;
      }
      double want = 0.0, magnitude = 0.0;
      for (int k = 0; k < in; ++k) {
        const double term = static_cast<double>(x[static_cast<std::size_t>(r) * in + k]) *
                            bf16_to_float(w[static_cast<std::size_t>(o) * in + k]);
        want += term;
        magnitude += std::abs(term);
      }
      EXPECT_NEAR(got, want, 1e-5 * magnitude)
          << set << " in " << in << " rows " << rows << " r " << r << " o " << o;
      if (::testing::Test::HasFailure()) return;  // one report, not thousands
    }
  }
}

// y = x . w over bf16 rows.
TEST(SimdKernels, Bf16RowProductsMatchTheFloat64Reference) {
  std::mt19937 rng(7);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const int in : {16, 37, 96, 160, 896, 4864}) {  // 96, 160: a tail after 128-wide blocks
      for (const int rows : {1, 2, 3, 4, 5}) {
        const std::vector<float> x = random_floats(static_cast<std::size_t>(rows) * in, rng);
        const Bf16Values w = random_bf16(static_cast<std::size_t>(kColumns.out) * in, rng);
        std::vector<float> y(static_cast<std::size_t>(rows) * kColumns.out, kUntouched);
        set->dot_bf16_rows(x.data(), rows, in, w.odd(), kColumns.first, kColumns.count,
                           kColumns.out, y.data());
        expect_products(set->name, x, w.bits, rows, in, y);
      }
    }
  }
}

// The sets that multiply bf16 pairs round x to the nearest even bf16 exactly as torch does
// (float_to_bf16), ties and tails of every length included.
TEST(SimdKernels, RoundingToBf16IsToNearestEven) {
  std::mt19937 rng(5);
  for (const SimdKernels* set : supported_simd_kernels()) {
    if (set->round_to_bf16 == nullptr) continue;
    for (const std::size_t n : {1, 15, 16, 17, 31, 32, 33, 100}) {
      std::vector<float> x = random_floats(n, rng, -300.0f, 300.0f);
      for (std::size_t i = 0; i < n; i += 3) {  // every third a tie: lower half 0x8000
        std::uint32_t bits;
        std::memcpy(&bits, &x[i], 4);
        bits = (bits & 0xffff0000u) | 0x8000u;
        std::memcpy(&x[i], &bits, 4);
      }
      std::vector<std::uint16_t> got(n + 1, 0x1234);
      set->round_to_bf16(x.data(), n, got.data());
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(got[i], float_to_bf16(x[i])) << set->name << " n " << n << " i " << i;
      }
      EXPECT_EQ(got[n], 0x1234) << "written past the end";
    }
  }
}

// y = bf16(x) . w, against the same bf16 values of x.
TEST(SimdKernels, Bf16PairProductsMatchTheFloat64Reference) {
  std::mt19937 rng(9);
  for (const SimdKernels* set : supported_simd_kernels()) {
    if (set->dot_bf16x_rows == nullptr) continue;
    for (const int in : {16, 37, 96, 160, 896, 4864}) {
      for (const int rows : {1, 2, 3, 4, 5, 9}) {
        const Bf16Values x = random_bf16(static_cast<std::size_t>(rows) * in, rng);
        const Bf16Values w = random_bf16(static_cast<std::size_t>(kColumns.out) * in, rng);
        std::vector<float> y(static_cast<std::size_t>(rows) * kColumns.out, kUntouched);
        set->dot_bf16x_rows(x.bits.data(), rows, in, w.odd(), kColumns.first, kColumns.count,
                            kColumns.out, y.data());
        std::vector<float> values(x.bits.size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = bf16_to_float(x.bits[i]);
        expect_products(set->name, values, w.bits, rows, in, y);
      }
    }
  }
}

// The tile unit's products (AMX) of many rows: bf16(x) . w as dot_bf16x_rows computes it,
// laid out by tile_bf16x first; rows and widths that fill no whole tile, and 50 outputs
// (a block of 32, one of 16 and 2 left to the AVX-512 BF16 kernel).
TEST(SimdKernels, TiledProductsMatchTheFloat64Reference) {
  std::mt19937 rng(11);
  const Columns columns{.out = 70, .first = 3, .count = 50};
  bool tested = false;
  for (const SimdKernels* set : supported_simd_kernels()) {
    if (set->dot_tiled_bf16x_rows == nullptr) continue;
    tested = true;
    for (const int in : {16, 37, 96, 160, 896, 4864}) {
      for (const int rows : {1, 15, 17, 32, 33, 64, 70}) {
        const Bf16Values x = random_bf16(static_cast<std::size_t>(rows) * in, rng);
        const Bf16Values w = random_bf16(static_cast<std::size_t>(columns.out) * in, rng);
        std::vector<std::uint16_t> tiled(set->tiled_bf16x_size(rows, in), 0x7fff);
        set->tile_bf16x(x.bits.data(), rows, in, tiled.data());
        std::vector<float> y(static_cast<std::size_t>(rows) * columns.out, kUntouched);
        set->dot_tiled_bf16x_rows(tiled.data(), x.bits.data(), rows, in, w.odd(), columns.first,
                                  columns.count, columns.out, y.data());
        std::vector<float> values(x.bits.size());
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = bf16_to_float(x.bits[i]);
        expect_products(set->name, values, w.bits, rows, in, y, columns);
      }
    }
  }
  if (!tested) GTEST_SKIP() << "this CPU has no AMX-BF16 tiles";
}

// dot and add_scaled: within 1e-6 of the magnitude of the terms.
TEST(SimdKernels, DotAndAddScaledMatchTheFloat64Reference) {
  std::mt19937 rng(11);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const int n : {1, 7, 16, 33, 64, 128, 1000}) {
      const std::vector<float> a = random_floats(static_cast<std::size_t>(n), rng);
      const std::vector<float> b = random_floats(static_cast<std::size_t>(n), rng);
      double want = 0.0, magnitude = 0.0;
      for (int k = 0; k < n; ++k) {
        want += static_cast<double>(a[k]) * b[k];
        magnitude += std::abs(static_cast<double>(a[k]) * b[k]);
      }
      EXPECT_NEAR(set->dot(a.data(), b.data(), n), want, 1e-6 * magnitude) << set->name << n;
      std::vector<float> y = b;
      set->add_scaled(0.37f, a.data(), y.data(), n);
      for (int k = 0; k < n; ++k) {
        EXPECT_NEAR(y[k], b[k] + 0.37 * a[k], 1e-6) << set->name << " n " << n << " k " << k;
      }
    }
  }
}

// The strided forms (one block of keys or values): the same references, key by key. The
// counts cover whole groups of 8 and 16 keys and the keys left after them; the widths
// cover one to more than 8 registers and widths that are no multiple of 16.
TEST(SimdKernels, StridedAttentionKernelsMatchTheFloat64Reference) {
  std::mt19937 rng(19);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const auto& [n, count] : {std::pair{8, 13},
                                   {16, 16},
                                   {64, 13},
                                   {64, 37},
                                   {72, 24},
                                   {128, 16},
                                   {136, 33},
                                   {256, 20},
                                   {20, 1}}) {
      const std::size_t stride = static_cast<std::size_t>(n) * 3 + 5;
      const std::vector<float> q = random_floats(static_cast<std::size_t>(n), rng);
      const std::vector<float> kv = random_floats(stride * count, rng);
      const std::vector<float> p = random_floats(count, rng);
      std::vector<float> scores(count);
      set->dot_strided(q.data(), kv.data(), stride, count, n, 0.125f, scores.data());
      std::vector<float> out(static_cast<std::size_t>(n), 1.0f);
      set->add_scaled_strided(p.data(), kv.data(), stride, count, n, out.data());
      for (int j = 0; j < count; ++j) {
        double want = 0.0, magnitude = 0.0;
        for (int d = 0; d < n; ++d) {
          const double term = static_cast<double>(q[d]) * kv[j * stride + d];
          want += term;
          magnitude += std::abs(term);
        }
        EXPECT_NEAR(scores[j], 0.125 * want, 1e-6 * magnitude) << set->name << " n " << n;
      }
      for (int d = 0; d < n; ++d) {
        double want = 1.0;
        for (int j = 0; j < count; ++j) want += static_cast<double>(p[j]) * kv[j * stride + d];
        EXPECT_NEAR(out[d], want, 1e-5) << set->name << " n " << n << " d " << d;
      }
    }
  }
}

// exp_shifted: each exponential within 4e-7 relative (and its sum within 1e-6) of the
// float64 one, over the arguments softmax gives it: [-87, 0].
TEST(SimdKernels, ShiftedExponentialsMatchTheFloat64Reference) {
  std::mt19937 rng(13);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const int n : {1, 5, 16, 17, 100, 1024}) {
      const std::vector<float> s = random_floats(static_cast<std::size_t>(n), rng, -80.0f, 7.0f);
      std::vector<float> e = s;
      const float shift = 7.0f;
      const float sum = set->exp_shifted(e.data(), n, shift);
      double want_sum = 0.0;
      for (int k = 0; k < n; ++k) {
        // The shift is subtracted in f32, as the kernel does; the exponential is the test.
        const double want = std::exp(static_cast<double>(s[k] - shift));
        want_sum += want;
        EXPECT_NEAR(e[k], want, 4e-7 * want) << set->name << " at " << s[k];
      }
      EXPECT_NEAR(sum, want_sum, 1e-6 * want_sum) << set->name << " n " << n;
    }
  }
}

// sum_exp: the f64 sum of the same exponentials within 4e-7 relative, s left as it was,
// over a vocabulary-sized row too (151936, Qwen's) and lengths with a partial last vector.
TEST(SimdKernels, SumOfExponentialsMatchesTheFloat64Reference) {
  std::mt19937 rng(23);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const std::size_t n : {1u, 7u, 16u, 33u, 151936u}) {
      const std::vector<float> s = random_floats(n, rng, -80.0f, 7.0f);
      const std::vector<float> before = s;
      const float shift = 7.0f;
      double want = 0.0;
      for (const float v : s) want += std::exp(static_cast<double>(v - shift));
      EXPECT_NEAR(set->sum_exp(s.data(), n, shift), want, 4e-7 * want) << set->name << " n " << n;
      EXPECT_EQ(s, before) << set->name;
    }
  }
}

// SiLU(g) * u within 1e-6 relative (plus 1e-30 absolute, for the underflowing tail).
TEST(SimdKernels, SiluMulMatchesTheFloat64Reference) {
  std::mt19937 rng(17);
  for (const SimdKernels* set : supported_simd_kernels()) {
    for (const std::size_t n : {1u, 9u, 16u, 4864u}) {
      const std::vector<float> g = random_floats(n, rng, -40.0f, 40.0f);
      const std::vector<float> u = random_floats(n, rng);
      std::vector<float> out = g;
      set->silu_mul(out.data(), u.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const double want = g[i] / (1.0 + std::exp(-static_cast<double>(g[i]))) * u[i];
        EXPECT_NEAR(out[i], want, 1e-6 * std::abs(want) + 1e-30) << set->name << " g " << g[i];
      }
    }
  }
}

}  // namespace
}  // namespace baton
