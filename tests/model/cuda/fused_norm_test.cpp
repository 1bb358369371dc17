// skinny_gemm_normed (BATON_CUDA_FUSED_NORM): a one-row product whose blocks norm their own
// input row equals rms_norm followed by skinny_gemm, at the hidden sizes of the 0.5B (896)
// and 8B (4096) shapes and the largest it takes (8192), in f32 and bf16 output. The two
// sum the squares in different orders, so the norm's scale may differ in its last bit and
// a few bf16 inputs by one unit: the outputs must agree within 2e-3 (normwise), not bit for
// bit. Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "baton/model/cuda/model_kernels.h"
#include "baton/model/cuda/skinny_gemm.h"
#include "model/cuda/device_data.h"

namespace baton::cuda::kernels {
namespace fused_norm_test {
namespace {

using test_data::download;
using test_data::random_matrix;
using test_data::upload;
using test_data::widen;

constexpr float kEps = 1e-5f;

std::vector<float> random_floats(std::size_t count, std::uint32_t seed, float scale) {
  const test_data::Matrix m = random_matrix(count, seed, scale);
  return m.values;
}

double normwise_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double difference = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(difference / norm);
}

// y of one row through rms_norm + skinny_gemm and through skinny_gemm_normed, as floats.
template <typename Out>
void compare(int in, int out) {
  const std::vector<float> residual = random_floats(static_cast<std::size_t>(in), 3, 4.0f);
  const std::vector<float> weight = random_floats(static_cast<std::size_t>(in), 5, 1.5f);
  const test_data::Matrix w = random_matrix(static_cast<std::size_t>(out) * in, 7);
  const auto d_residual = upload(residual.data(), residual.size() * sizeof(float));
  const auto d_weight = upload(weight.data(), weight.size() * sizeof(float));
  const auto d_w = upload(w.bits.data(), w.bits.size() * sizeof(std::uint16_t));
  DeviceBuffer normed(static_cast<std::size_t>(in) * sizeof(bf16));
  DeviceBuffer unfused(static_cast<std::size_t>(out) * sizeof(Out));
  DeviceBuffer fused(static_cast<std::size_t>(out) * sizeof(Out));
  const auto* residual_in = static_cast<const float*>(d_residual->get());
  const auto* weight_in = static_cast<const float*>(d_weight->get());
  const auto* w_in = static_cast<const bf16*>(d_w->get());
  ASSERT_EQ(rms_norm(residual_in, nullptr, 1, in, weight_in, kEps, static_cast<bf16*>(normed.get()),
                     nullptr),
            cudaSuccess);
  const NormedRow row{.residual = residual_in, .weight = weight_in, .eps = kEps};
  if constexpr (std::is_same_v<Out, float>) {
    ASSERT_EQ(skinny_gemm(static_cast<const bf16*>(normed.get()), 1, w_in, out, in,
                          static_cast<float*>(unfused.get()), 0.0f, nullptr),
              cudaSuccess);
    ASSERT_EQ(skinny_gemm_normed(row, w_in, out, in, static_cast<float*>(fused.get()), nullptr),
              cudaSuccess);
  } else {
    ASSERT_EQ(skinny_gemm(static_cast<const bf16*>(normed.get()), 1, w_in, out, in,
                          static_cast<bf16*>(unfused.get()), nullptr),
              cudaSuccess);
    ASSERT_EQ(skinny_gemm_normed(row, w_in, out, in, static_cast<bf16*>(fused.get()), nullptr),
              cudaSuccess);
  }
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> a(static_cast<std::size_t>(out));
  std::vector<float> b(static_cast<std::size_t>(out));
  if constexpr (std::is_same_v<Out, float>) {
    a = download<float>(fused, a.size());
    b = download<float>(unfused, b.size());
  } else {
    const auto fa = download<std::uint16_t>(fused, a.size());
    const auto fb = download<std::uint16_t>(unfused, b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = widen(fa[i]);
      b[i] = widen(fb[i]);
    }
  }
  EXPECT_LT(normwise_difference(a, b), 2e-3) << "in " << in << ", out " << out;
}

TEST(FusedNorm, TheProductOfItsOwnNormEqualsNormThenProduct) {
  SKIP_WITHOUT_GPU();
  for (const int in : {896, 4096, 8192}) {
    compare<float>(in, 1152);
    compare<float>(in, 301);  // a last warp with one row of w
    compare<bf16>(in, 1152);
  }
}

TEST(FusedNorm, RowsItCannotNormAreRefused) {
  SKIP_WITHOUT_GPU();
  EXPECT_FALSE(normed_fits(8200));
  EXPECT_FALSE(normed_fits(898));
  const NormedRow row{};
  EXPECT_EQ(skinny_gemm_normed(row, nullptr, 16, 8200, static_cast<float*>(nullptr), nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace fused_norm_test
}  // namespace baton::cuda::kernels
#endif  // BATON_HAVE_CUDA
