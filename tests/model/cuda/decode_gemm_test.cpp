// decode_gemm against a double-precision product on the host (an independent path), at
// every row count it takes, with inner sizes that are and are not whole groups of 32 and
// feature counts that are not whole tiles; and a row's result bit for bit the same
// whatever else is in the batch. Tolerance: 1e-3 of the sum of the terms' magnitudes (f32
// accumulation of exact bf16 products; a wrong pairing of w and x would be off by about
// the result itself), plus bf16's rounding for a bf16 y.
// Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/decode_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/cuda/device_data.h"

namespace baton::cuda::kernels {
namespace decode_gemm_test {
namespace {

using test_data::download;
using test_data::Matrix;
using test_data::random_matrix;
using test_data::upload;
using test_data::widen;

struct Product {
  int out = 0;
  int in = 0;
  Matrix w;
  Matrix x;  // kDecodeMaxRows rows
  std::unique_ptr<DeviceBuffer> w_device;
  std::unique_ptr<DeviceBuffer> x_device;

  Product(int out_features, int in_features)
      : out(out_features),
        in(in_features),
        w(random_matrix(static_cast<std::size_t>(out) * in, 1)),
        x(random_matrix(static_cast<std::size_t>(kDecodeMaxRows) * in, 2)),
        w_device(upload(w.bits.data(), w.bits.size() * 2)),
        x_device(upload(x.bits.data(), x.bits.size() * 2)) {}

  const bf16* x_rows(int first) const {
    return static_cast<const bf16*>(x_device->get()) + static_cast<std::size_t>(first) * in;
  }

  // y [rows x out] in f32 from x's rows [first, first + rows), y starting at `initial`.
  std::vector<float> f32(int first, int rows, const std::vector<float>& initial, float beta) const {
    const std::unique_ptr<DeviceBuffer> y = upload(initial.data(), initial.size() * sizeof(float));
    BATON_CUDA_CHECK(decode_gemm(x_rows(first), rows, static_cast<const bf16*>(w_device->get()),
                                 out, in, static_cast<float*>(y->get()), beta, nullptr));
    BATON_CUDA_CHECK(cudaDeviceSynchronize());
    return download<float>(*y, initial.size());
  }

  std::vector<std::uint16_t> bf16_out(int rows) const {
    DeviceBuffer y(static_cast<std::size_t>(rows) * out * 2);
    BATON_CUDA_CHECK(decode_gemm(x_rows(0), rows, static_cast<const bf16*>(w_device->get()), out,
                                 in, static_cast<bf16*>(y.get()), nullptr));
    BATON_CUDA_CHECK(cudaDeviceSynchronize());
    return download<std::uint16_t>(y, static_cast<std::size_t>(rows) * out);
  }

  // The exact product of row r and feature f, and the sum of its terms' magnitudes.
  std::pair<double, double> reference(int r, int f) const {
    double sum = 0.0;
    double magnitude = 0.0;
    for (int k = 0; k < in; ++k) {
      const double term = static_cast<double>(x.values[static_cast<std::size_t>(r) * in + k]) *
                          w.values[static_cast<std::size_t>(f) * in + k];
      sum += term;
      magnitude += std::abs(term);
    }
    return {sum, magnitude};
  }
};

class DecodeGemm : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(DecodeGemm, MatchesADoubleProductAtEveryRowCount) {
  SKIP_WITHOUT_GPU();
  const auto [out, in] = GetParam();
  const Product p(out, in);
  for (int rows = 1; rows <= kDecodeMaxRows; ++rows) {
    const std::vector<float> initial(static_cast<std::size_t>(rows) * out, 0.0f);
    const std::vector<float> y = p.f32(0, rows, initial, 0.0f);
    for (int r = 0; r < rows; ++r) {
      for (int f = 0; f < out; ++f) {
        const auto [exact, magnitude] = p.reference(r, f);
        ASSERT_NEAR(y[static_cast<std::size_t>(r) * out + f], exact, 1e-3 * magnitude + 1e-6)
            << "rows " << rows << " row " << r << " feature " << f;
      }
    }
  }
}

TEST_P(DecodeGemm, AddsToYWithBetaAndRoundsABf16Y) {
  SKIP_WITHOUT_GPU();
  const auto [out, in] = GetParam();
  const Product p(out, in);
  for (const int rows : {3, 17, 32}) {
    const Matrix initial_matrix = random_matrix(static_cast<std::size_t>(rows) * out, 3);
    const std::vector<float> y = p.f32(0, rows, initial_matrix.values, 1.0f);
    const std::vector<std::uint16_t> rounded = p.bf16_out(rows);
    for (int r = 0; r < rows; ++r) {
      for (int f = 0; f < out; ++f) {
        const std::size_t i = static_cast<std::size_t>(r) * out + f;
        const auto [exact, magnitude] = p.reference(r, f);
        ASSERT_NEAR(y[i], initial_matrix.values[i] + exact, 1e-3 * magnitude + 1e-5)
            << r << " " << f;
        ASSERT_NEAR(widen(rounded[i]), exact, std::abs(exact) / 256 + 1e-3 * magnitude + 1e-6)
            << r << " " << f;
      }
    }
  }
}

TEST_P(DecodeGemm, ARowsResultDoesNotDependOnTheRestOfTheBatch) {
  SKIP_WITHOUT_GPU();
  const auto [out, in] = GetParam();
  const Product p(out, in);
  const std::vector<float> zeros(static_cast<std::size_t>(kDecodeMaxRows) * out, 0.0f);
  const std::vector<float> whole = p.f32(0, kDecodeMaxRows, zeros, 0.0f);
  for (int rows = 1; rows < kDecodeMaxRows; ++rows) {
    const std::vector<float> part =
        p.f32(0, rows, std::vector<float>(static_cast<std::size_t>(rows) * out, 0.0f), 0.0f);
    for (std::size_t i = 0; i < part.size(); ++i) ASSERT_EQ(part[i], whole[i]) << rows << " " << i;
  }
  for (int r = 0; r < kDecodeMaxRows; ++r) {  // each row alone
    const std::vector<float> alone = p.f32(r, 1, std::vector<float>(out, 0.0f), 0.0f);
    for (int f = 0; f < out; ++f) {
      ASSERT_EQ(alone[f], whole[static_cast<std::size_t>(r) * out + f]) << r << " " << f;
    }
  }
}

// Features: a tile and a half, several blocks with a ragged end. Inner: a lane's share
// only (8), whole groups, a ragged last group, the 8B model's widest.
INSTANTIATE_TEST_SUITE_P(Shapes, DecodeGemm,
                         ::testing::Values(std::pair{24, 8}, std::pair{300, 520},
                                           std::pair{96, 1024}, std::pair{40, 14336}));

TEST(DecodeGemmFits, TakesOneToSixtyFourRowsOfWholeLanes) {
  EXPECT_TRUE(decode_gemm_fits(1, 8));
  EXPECT_TRUE(decode_gemm_fits(64, 4096));
  EXPECT_FALSE(decode_gemm_fits(0, 4096));
  EXPECT_FALSE(decode_gemm_fits(65, 4096));
  EXPECT_FALSE(decode_gemm_fits(8, 4100));
  EXPECT_EQ(decode_gemm(nullptr, 65, nullptr, 16, 64, static_cast<float*>(nullptr), 0.0f, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_gemm_test
}  // namespace baton::cuda::kernels
#endif  // BATON_HAVE_CUDA
