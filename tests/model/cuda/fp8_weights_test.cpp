// `--weights fp8` kernels against host references written from the E4M3 definition (OCP
// FP8: sign, 4 exponent bits of bias 7, 3 mantissa bits; 0x7f and 0xff NaN; largest 448):
//   - quantize_fp8_rows: each row's scale is its largest magnitude / 448 and each code is
//     the E4M3 value nearest to value / scale (ties to the even code, beyond 448 saturated),
//     byte for byte, found by search over all 254 finite codes;
//   - dequantize_fp8_rows: code x scale rounded to bf16, bit for bit;
//   - decode_gemm_fp8 at every row count against a double product of the decoded weights
//     (product_check.h); skinny_gemm_fp8 (one row, 16 weights a load) likewise.
// Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/fp8_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/skinny_gemm.h"
#include "model/cuda/device_data.h"
#include "model/cuda/product_check.h"

namespace baton::cuda::kernels {
namespace fp8_weights_test {
namespace {

using test_data::bf16_bits;
using test_data::download;
using test_data::Matrix;
using test_data::random_matrix;
using test_data::upload;
using test_data::widen;

double e4m3_value(std::uint8_t code) {
  const int exponent = (code >> 3) & 0xf;
  const int mantissa = code & 0x7;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa / 8.0, -6)
                                         : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return (code & 0x80) != 0 ? -magnitude : magnitude;
}

bool is_nan(std::uint8_t code) { return (code & 0x7f) == 0x7f; }

// The nearest finite code to `v`; ties go to the code with an even mantissa.
std::uint8_t nearest_code(double v) {
  std::uint8_t best = 0;
  double best_distance = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    if (is_nan(code)) continue;
    const double distance = std::fabs(e4m3_value(code) - v);
    if (distance < best_distance ||
        (distance == best_distance && (code & 1) == 0 && (best & 1) == 1)) {
      best = code;
      best_distance = distance;
    }
  }
  return best;
}

// A matrix whose rows span magnitudes from 1e-3 to 1e3, one row all zeros.
Matrix spread_matrix(int rows, int cols) {
  Matrix m = random_matrix(static_cast<std::size_t>(rows) * cols, 11);
  for (int r = 0; r < rows; ++r) {
    const float row_scale = r == 3 ? 0.0f : std::pow(10.0f, static_cast<float>(r % 7) - 3.0f);
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      m.bits[i] = bf16_bits(m.values[i] * row_scale);
      m.values[i] = widen(m.bits[i]);
    }
  }
  return m;
}

struct Quantized {
  std::unique_ptr<DeviceBuffer> codes, scales;
  std::vector<std::uint8_t> host_codes;
  std::vector<float> host_scales;
};

Quantized quantize(const Matrix& w, int rows, int cols) {
  const std::unique_ptr<DeviceBuffer> bf16s = upload(w.bits.data(), w.bits.size() * 2);
  Quantized q{.codes = std::make_unique<DeviceBuffer>(w.bits.size()),
              .scales = std::make_unique<DeviceBuffer>(rows * sizeof(float))};
  BATON_CUDA_CHECK(quantize_fp8_rows(static_cast<const bf16*>(bf16s->get()), rows, cols,
                                     static_cast<std::uint8_t*>(q.codes->get()),
                                     static_cast<float*>(q.scales->get()), nullptr));
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  q.host_codes = download<std::uint8_t>(*q.codes, w.bits.size());
  q.host_scales = download<float>(*q.scales, static_cast<std::size_t>(rows));
  return q;
}

TEST(Fp8Weights, QuantizeGivesTheNearestCodeOfEachValueOverItsRowsScale) {
  SKIP_WITHOUT_GPU();
  const int rows = 19, cols = 328;
  const Matrix w = spread_matrix(rows, cols);
  const Quantized q = quantize(w, rows, cols);
  for (int r = 0; r < rows; ++r) {
    float largest = 0.0f;
    for (int c = 0; c < cols; ++c) {
      largest = std::max(largest, std::fabs(w.values[static_cast<std::size_t>(r) * cols + c]));
    }
    const float scale = largest > 0.0f ? largest / 448.0f : 1.0f;
    ASSERT_EQ(q.host_scales[r], scale) << "row " << r;
    for (int c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * cols + c;
      const float v = w.values[i] / scale;
      // Compared as values: a value that rounds to zero may come out as -0 or +0.
      ASSERT_FALSE(is_nan(q.host_codes[i]));
      ASSERT_EQ(e4m3_value(q.host_codes[i]), e4m3_value(nearest_code(v)))
          << "row " << r << " col " << c << " value " << v;
    }
  }
}

TEST(Fp8Weights, DequantizeIsTheCodeTimesTheScaleInBf16) {
  SKIP_WITHOUT_GPU();
  const int rows = 9, cols = 40;
  const Matrix w = spread_matrix(rows, cols);
  const Quantized q = quantize(w, rows, cols);
  DeviceBuffer out(w.bits.size() * 2);
  BATON_CUDA_CHECK(dequantize_fp8_rows(static_cast<const std::uint8_t*>(q.codes->get()),
                                       static_cast<const float*>(q.scales->get()), rows, cols,
                                       static_cast<bf16*>(out.get()), nullptr));
  const auto got = download<std::uint16_t>(out, w.bits.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto value = static_cast<float>(e4m3_value(q.host_codes[i]));
    ASSERT_EQ(got[i], bf16_bits(value * q.host_scales[i / cols])) << i;
  }
}

// `product` at each of `row_counts` on random E4M3 weights of each shape.
void check_product(test_data::EightBitProduct<std::uint8_t> product,
                   const std::vector<std::pair<int, int>>& shapes,
                   const std::vector<int>& row_counts) {
  for (const auto& [out, in] : shapes) {
    const Matrix w = random_matrix(static_cast<std::size_t>(out) * in, 5, 0.05f);
    const Quantized q = quantize(w, out, in);
    const int cols = in;
    const auto weight = [&q, cols](int f, int k) {
      return e4m3_value(q.host_codes[static_cast<std::size_t>(f) * cols + k]) * q.host_scales[f];
    };
    test_data::expect_product_matches(product, static_cast<const std::uint8_t*>(q.codes->get()),
                                      static_cast<const float*>(q.scales->get()), weight, out, in,
                                      row_counts);
  }
}

TEST(Fp8Weights, DecodeProductAgainstADoubleProductOfTheDecodedWeights) {
  SKIP_WITHOUT_GPU();
  check_product(decode_gemm_fp8, {{37, 200}, {256, 4096}, {19, 72}},
                {1, 2, 7, 8, 9, 16, 24, 31, 32, 33, 40, 64});
}

TEST(Fp8Weights, OneRowProductAgainstADoubleProductOfTheDecodedWeights) {
  SKIP_WITHOUT_GPU();
  check_product(skinny_gemm_fp8, {{37, 208}, {256, 4096}, {19, 80}, {3, 14336}}, {1});
}

TEST(Fp8Weights, OneRowProductRefusesRowsThatEndMidLoad) {  // before any CUDA call
  float y = 0.0f;
  // 200 E4M3 values a row: the 16-byte loads would straddle rows.
  EXPECT_EQ(skinny_gemm_fp8(nullptr, 1, nullptr, nullptr, 1, 200, &y, 0.0f, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(skinny_gemm_fp8(nullptr, 2, nullptr, nullptr, 1, 208, &y, 0.0f, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace fp8_weights_test
}  // namespace baton::cuda::kernels
#endif
