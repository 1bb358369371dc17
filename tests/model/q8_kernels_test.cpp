// The q8 decode kernel, every variant this CPU runs (the portable one always): against a
// float64 product of the dequantized weights and the exact x, within the bound the
// activation rounding allows (q8_kernels.h); against the exact product of the quantized
// integers within f32 rounding; over odd shapes (partial groups, odd group counts, more
// rows than one register block, tiles that do not divide the rows).
#include "baton/model/cpu/kernels/q8_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton {
namespace {

std::vector<Q8Kernel> supported_kernels() {
  std::vector<Q8Kernel> kernels;
  for (const Q8Kernel k : {Q8Kernel::portable, Q8Kernel::avx2, Q8Kernel::avx512_vnni}) {
    if (q8_supported(k)) kernels.push_back(k);
  }
  return kernels;
}

std::vector<float> normal_values(std::size_t count, float sigma, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

struct Case {
  int rows, cols, out;
};

// Weights like a model's (sigma 0.02), activations with a few outliers as real ones have.
struct Fixture {
  Fixture(const Case& c, unsigned seed) : shape(c), w(c.out, c.cols) {
    const std::vector<float> weights =
        normal_values(static_cast<std::size_t>(c.out) * c.cols, 0.02f, seed);
    w.quantize_rows(0, c.out, weights.data());
    x = normal_values(static_cast<std::size_t>(c.rows) * c.cols, 1.0f, seed + 1);
    for (std::size_t i = 0; i < x.size(); i += 37) x[i] *= 20.0f;
    quantize_activations(x.data(), c.rows, c.cols, qx);
  }
  Case shape;
  Q8Matrix w;
  std::vector<float> x;
  Q8Activations qx;
};

// y from `kernel` in tiles of `tile` weight rows, as linear() splits a product.
std::vector<float> tiled_product(Q8Kernel kernel, const Fixture& f, int tile) {
  std::vector<float> y(static_cast<std::size_t>(f.shape.rows) * f.shape.out, NAN);
  for (int first = 0; first < f.shape.out; first += tile) {
    q8_dot_rows(kernel, f.qx, f.w, first, std::min(tile, f.shape.out - first), y.data());
  }
  return y;
}

TEST(Q8Kernels, EveryVariantMatchesTheDequantizedProductWithinTheActivationBound) {
  const std::vector<Case> cases{
      {.rows = 1, .cols = 64, .out = 37},  {.rows = 2, .cols = 896, .out = 19},
      {.rows = 3, .cols = 96, .out = 23},  {.rows = 4, .cols = 100, .out = 17},
      {.rows = 5, .cols = 160, .out = 11}, {.rows = 9, .cols = 7, .out = 13},
      {.rows = 1, .cols = 32, .out = 1},   {.rows = 4, .cols = 4864, .out = 5}};
  for (const Q8Kernel kernel : supported_kernels()) {
    for (const Case& c : cases) {
      const Fixture f(c, static_cast<unsigned>(c.cols + c.rows));
      const std::vector<float> y = tiled_product(kernel, f, 8);
      std::vector<float> w_deq(static_cast<std::size_t>(c.out) * c.cols);
      f.w.dequantize_rows(0, c.out, w_deq.data());
      for (int r = 0; r < c.rows; ++r) {
        const float* xs = f.qx.scales.data() + static_cast<std::size_t>(r) * f.qx.groups;
        const std::int8_t* xq = f.qx.values.data() + static_cast<std::size_t>(r) * f.qx.stride();
        for (int o = 0; o < c.out; ++o) {
          double reference = 0.0, quantized = 0.0, bound = 0.0, magnitude = 0.0;
          for (int i = 0; i < c.cols; ++i) {
            const double wi = w_deq[static_cast<std::size_t>(o) * c.cols + i];
            const double xi = f.x[static_cast<std::size_t>(r) * c.cols + i];
            const double x_deq = static_cast<double>(xq[i]) * xs[i / 32];
            reference += wi * xi;
            quantized += wi * x_deq;
            bound += std::abs(wi) * xs[i / 32] / 2;
            magnitude += std::abs(wi * x_deq);
          }
          const double got = y[static_cast<std::size_t>(r) * c.out + o];
          const std::string where = std::string(to_string(kernel)) + " rows " +
                                    std::to_string(c.rows) + " cols " + std::to_string(c.cols) +
                                    " r " + std::to_string(r) + " o " + std::to_string(o);
          // f32 sums of at most cols terms: relative error well under 1e-5 of the magnitude.
          EXPECT_NEAR(got, quantized, 1e-5 * magnitude + 1e-12) << where;
          EXPECT_NEAR(got, reference, bound + 1e-5 * magnitude + 1e-12) << where;
        }
      }
    }
  }
}

TEST(Q8Kernels, VariantsAgreeWithThePortableOne) {
  const Fixture f({4, 1000, 29}, 7);  // 32 groups minus a partial: tail and pairs
  const std::vector<float> portable = tiled_product(Q8Kernel::portable, f, 29);
  for (const Q8Kernel kernel : supported_kernels()) {
    const std::vector<float> y = tiled_product(kernel, f, 3);
    for (std::size_t i = 0; i < y.size(); ++i) {
      EXPECT_NEAR(y[i], portable[i], 1e-4f * (1.0f + std::abs(portable[i])))
          << to_string(kernel) << " at " << i;
    }
  }
  EXPECT_TRUE(q8_supported(q8_best_kernel()));
  EXPECT_TRUE(q8_supported(Q8Kernel::portable));
}

TEST(Q8Kernels, ATileWritesOnlyItsColumns) {
  const Fixture f({3, 64, 20}, 3);
  for (const Q8Kernel kernel : supported_kernels()) {
    std::vector<float> y(3 * 20, -7.0f);
    q8_dot_rows(kernel, f.qx, f.w, 5, 6, y.data());
    for (int r = 0; r < 3; ++r) {
      for (int o = 0; o < 20; ++o) {
        const bool inside = o >= 5 && o < 11;
        EXPECT_EQ(y[static_cast<std::size_t>(r) * 20 + o] == -7.0f, !inside)
            << to_string(kernel) << " r " << r << " o " << o;
      }
    }
  }
}

TEST(Q8Kernels, QuantizedActivationsCarryTheirLaneOffsets) {
  Q8Activations qx;
  const std::vector<float> x = normal_values(2 * 40, 1.0f, 11);
  quantize_activations(x.data(), 2, 40, qx);
  ASSERT_EQ(qx.groups, 2);
  ASSERT_EQ(qx.values.size(), 2u * 64);
  ASSERT_EQ(qx.lane_offsets.size(), 2u * 16);
  for (std::size_t lane = 0; lane < qx.lane_offsets.size(); ++lane) {
    int sum = 0;
    for (std::size_t j = 0; j < 4; ++j) sum += qx.values[lane * 4 + j];
    EXPECT_EQ(qx.lane_offsets[lane], -128 * sum) << lane;
  }
  for (std::size_t c = 40; c < 64; ++c) EXPECT_EQ(qx.values[c], 0);  // padding
}

TEST(Q8Kernels, RefusesMismatchedShapesAndRowsOutsideTheWeight) {
  const Fixture f({1, 64, 8}, 1);
  Q8Activations other;
  const std::vector<float> x(96, 1.0f);
  quantize_activations(x.data(), 1, 96, other);
  std::vector<float> y(8);
  EXPECT_THROW(q8_dot_rows(other, f.w, 0, 8, y.data()), std::invalid_argument);
  EXPECT_THROW(q8_dot_rows(f.qx, f.w, 4, 5, y.data()), std::out_of_range);
  EXPECT_THROW(q8_dot_rows(f.qx, f.w, -1, 2, y.data()), std::out_of_range);
  EXPECT_NO_THROW(q8_dot_rows(f.qx, f.w, 8, 0, y.data()));
}

}  // namespace
}  // namespace baton
