// skinny_gemm_activated (BATON_CUDA_FUSED_SWIGLU): a one-row down product whose blocks make
// their own input, silu(gate) * up, equals silu_mul followed by skinny_gemm bit for bit
// (the same formula and rounding into the same bf16 x, then the same sums), with bf16, E4M3
// and Q8_0 weights, at the inner sizes of the 0.5B (4864) and 8B (14336) shapes, an odd
// multiple of 8 and the largest it takes, adding into a y that holds values (beta 1, as
// the residual). Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "baton/model/cuda/model_kernels.h"
#include "baton/model/cuda/q8_weights.h"
#include "baton/model/cuda/skinny_gemm.h"
#include "model/cuda/device_data.h"

namespace baton::cuda::kernels {
namespace fused_swiglu_test {
namespace {

using test_data::download;
using test_data::random_matrix;
using test_data::upload;

enum class Format { bf16, fp8, q8 };

// Random weights of `format` for an out x in product, and their scales (none for bf16).
struct Weights {
  std::vector<std::uint8_t> bytes;
  std::vector<float> scales;
};

Weights random_weights(Format format, int out, int in) {
  std::mt19937 rng(11);
  Weights w;
  if (format == Format::bf16) {
    const test_data::Matrix m = random_matrix(static_cast<std::size_t>(out) * in, 7);
    w.bytes.resize(m.bits.size() * 2);
    std::memcpy(w.bytes.data(), m.bits.data(), w.bytes.size());
    return w;
  }
  const std::size_t per_row =
      format == Format::q8 ? static_cast<std::size_t>(q8_stride(in)) : static_cast<std::size_t>(in);
  w.bytes.resize(per_row * out);
  for (auto& b : w.bytes) {
    b = static_cast<std::uint8_t>(rng());
    if (format == Format::fp8 && (b & 0x7f) == 0x7f) b ^= 1;  // no E4M3 NaN
  }
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  const std::size_t scales =
      format == Format::q8 ? static_cast<std::size_t>(out) * q8_groups(in) : out;
  for (std::size_t i = 0; i < scales; ++i) w.scales.push_back(scale(rng));
  return w;
}

void compare(Format format, int in, int out) {
  SCOPED_TRACE(::testing::Message()
               << "format " << static_cast<int>(format) << ", in " << in << ", out " << out);
  const test_data::Matrix gate_up = random_matrix(2 * static_cast<std::size_t>(in), 3, 4.0f);
  const test_data::Matrix held = random_matrix(static_cast<std::size_t>(out), 5, 2.0f);
  const Weights w = random_weights(format, out, in);
  const auto d_gate_up = upload(gate_up.bits.data(), gate_up.bits.size() * 2);
  const auto d_w = upload(w.bytes.data(), w.bytes.size());
  const auto d_scales =
      upload(w.scales.data(), std::max<std::size_t>(w.scales.size(), 1) * sizeof(float));
  const auto unfused = upload(held.values.data(), held.values.size() * sizeof(float));
  const auto fused = upload(held.values.data(), held.values.size() * sizeof(float));
  DeviceBuffer activated(static_cast<std::size_t>(in) * sizeof(bf16));
  const auto* gate_up_in = static_cast<const bf16*>(d_gate_up->get());
  const auto* scales = static_cast<const float*>(d_scales->get());
  auto* x = static_cast<bf16*>(activated.get());
  auto* y_unfused = static_cast<float*>(unfused->get());
  auto* y_fused = static_cast<float*>(fused->get());
  const ActivatedRow row{.gate_up = gate_up_in};
  ASSERT_EQ(silu_mul(gate_up_in, 1, in, x, nullptr), cudaSuccess);
  switch (format) {
    case Format::bf16: {
      const auto* weights = static_cast<const bf16*>(d_w->get());
      ASSERT_EQ(skinny_gemm(x, 1, weights, out, in, y_unfused, 1.0f, nullptr), cudaSuccess);
      ASSERT_EQ(skinny_gemm_activated(row, weights, out, in, y_fused, 1.0f, nullptr), cudaSuccess);
      break;
    }
    case Format::fp8: {
      const auto* weights = static_cast<const std::uint8_t*>(d_w->get());
      ASSERT_EQ(skinny_gemm_fp8(x, 1, weights, scales, out, in, y_unfused, 1.0f, nullptr),
                cudaSuccess);
      ASSERT_EQ(skinny_gemm_activated_fp8(row, weights, scales, out, in, y_fused, 1.0f, nullptr),
                cudaSuccess);
      break;
    }
    case Format::q8: {
      const auto* weights = static_cast<const std::int8_t*>(d_w->get());
      ASSERT_EQ(skinny_gemm_q8(x, 1, weights, scales, out, in, y_unfused, 1.0f, nullptr),
                cudaSuccess);
      ASSERT_EQ(skinny_gemm_activated_q8(row, weights, scales, out, in, y_fused, 1.0f, nullptr),
                cudaSuccess);
      break;
    }
  }
  BATON_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> a = download<float>(*fused, static_cast<std::size_t>(out));
  const std::vector<float> b = download<float>(*unfused, static_cast<std::size_t>(out));
  int unlike = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) ++unlike;
  }
  EXPECT_EQ(unlike, 0) << "first: fused " << a[0] << ", unfused " << b[0];
}

TEST(FusedSwiglu, TheProductOfItsOwnSwigluEqualsSwigluThenProductBitForBit) {
  SKIP_WITHOUT_GPU();
  for (const Format format : {Format::bf16, Format::fp8, Format::q8}) {
    for (const int in : {4864, 14336, kActivatedMaxIn}) {
      compare(format, in, 896);
      compare(format, in, 301);  // a last warp with one row of w
    }
    if (format == Format::bf16) compare(format, 1000, 64);  // in % 16 != 0: bf16 only
  }
}

TEST(FusedSwiglu, RowsItCannotActivateAreRefused) {
  SKIP_WITHOUT_GPU();
  EXPECT_FALSE(activated_fits(kActivatedMaxIn + 8));
  EXPECT_FALSE(activated_fits(1004));
  const ActivatedRow row{};
  EXPECT_EQ(skinny_gemm_activated(row, nullptr, 16, kActivatedMaxIn + 8, nullptr, 1.0f, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace fused_swiglu_test
}  // namespace baton::cuda::kernels
#endif  // BATON_HAVE_CUDA
