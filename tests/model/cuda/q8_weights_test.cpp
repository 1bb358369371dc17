// Q8_0 weights on the device, in the host's layout (Q8Matrix: int8 rows of whole groups of
// 32, an f32 scale a group), against host references:
//   - dequantize_q8_rows: value x its group's scale rounded to bf16, bit for bit;
//   - decode_gemm_q8 at every row count, and skinny_gemm_q8 at one row, against a double
//     product of x and the dequantized weights (product_check.h; int8 x bf16 products are
//     exact in f32, each group's f32 sum times its scale). Shapes include
//     rows that end mid-group (padding read as zeros), rows of magnitudes 1e-3 to 1e3, a row
//     of zeros and the value -128 (which a GGUF file may hold, quantize_group never writes).
// Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include "baton/model/cuda/q8_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "baton/model/cuda/decode_gemm.h"
#include "baton/model/cuda/skinny_gemm.h"
#include "baton/model/weights/q8_matrix.h"
#include "model/cuda/device_data.h"
#include "model/cuda/product_check.h"

namespace baton::cuda::kernels {
namespace q8_weights_test {
namespace {

using test_data::bf16_bits;
using test_data::download;
using test_data::Matrix;
using test_data::random_matrix;
using test_data::upload;

// Host Q8Matrix of random weights spread over rows of magnitude 1e-3 to 1e3 (row 3 all
// zeros), row 1 holding -128 in its first group; and its copy on the device.
struct Q8Weights {
  Q8Matrix host;
  std::unique_ptr<DeviceBuffer> values, scales;

  Q8Weights(int rows, int cols) : host(rows, cols) {
    const Matrix w = random_matrix(static_cast<std::size_t>(rows) * cols, 5);
    std::vector<float> spread(w.values);
    for (int r = 0; r < rows; ++r) {
      const float scale = r == 3 ? 0.0f : std::pow(10.0f, static_cast<float>(r % 7) - 3.0f);
      for (int c = 0; c < cols; ++c) spread[static_cast<std::size_t>(r) * cols + c] *= scale;
    }
    host.quantize_rows(0, rows, spread.data());
    if (rows > 1) {
      std::vector<std::int8_t> row(host.row_values(1), host.row_values(1) + cols);
      const std::vector<float> row_scales(host.row_scales(1), host.row_scales(1) + host.groups());
      row[0] = -128;
      host.set_row(1, row.data(), row_scales.data());
    }
    values = upload(host.row_values(0), static_cast<std::size_t>(rows) * host.stride());
    scales = upload(host.row_scales(0), static_cast<std::size_t>(rows) * host.groups() * 4);
  }
  double weight(int row, int col) const {
    return static_cast<double>(host.row_values(row)[col]) *
           host.row_scales(row)[col / Q8Matrix::kGroup];
  }
};

TEST(Q8Weights, DequantizeIsTheValueTimesItsGroupsScaleInBf16) {
  SKIP_WITHOUT_GPU();
  const int rows = 9, cols = 72;  // a last group of 8
  const Q8Weights w(rows, cols);
  DeviceBuffer out(static_cast<std::size_t>(rows) * cols * 2);
  BATON_CUDA_CHECK(dequantize_q8_rows(static_cast<const std::int8_t*>(w.values->get()),
                                      static_cast<const float*>(w.scales->get()), rows, cols,
                                      static_cast<bf16*>(out.get()), nullptr));
  const auto got = download<std::uint16_t>(out, static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const float value =
          static_cast<float>(w.host.row_values(r)[c]) * w.host.row_scales(r)[c / Q8Matrix::kGroup];
      ASSERT_EQ(got[static_cast<std::size_t>(r) * cols + c], bf16_bits(value))
          << "row " << r << " col " << c;
    }
  }
}

// `product` at each of `row_counts` on random Q8_0 weights of each shape.
void check_product(test_data::EightBitProduct<std::int8_t> product,
                   const std::vector<std::pair<int, int>>& shapes,
                   const std::vector<int>& row_counts) {
  for (const auto& [out, in] : shapes) {
    const Q8Weights w(out, in);
    test_data::expect_product_matches(
        product, static_cast<const std::int8_t*>(w.values->get()),
        static_cast<const float*>(w.scales->get()), [&w](int f, int k) { return w.weight(f, k); },
        out, in, row_counts);
  }
}

TEST(Q8Weights, DecodeProductAgainstADoubleProductOfTheDequantizedWeights) {
  SKIP_WITHOUT_GPU();
  check_product(decode_gemm_q8, {{37, 200}, {256, 4096}, {19, 72}},
                {1, 2, 7, 8, 9, 16, 24, 31, 32, 33, 40, 64});
}

TEST(Q8Weights, OneRowProductAgainstADoubleProductOfTheDequantizedWeights) {
  SKIP_WITHOUT_GPU();
  check_product(skinny_gemm_q8, {{37, 208}, {256, 4096}, {19, 80}, {3, 14336}}, {1});
}

TEST(Q8Weights, OneRowProductRefusesRowsThatEndMidLoad) {  // before any CUDA call
  float y = 0.0f;
  EXPECT_EQ(skinny_gemm_q8(nullptr, 1, nullptr, nullptr, 1, 200, &y, 0.0f, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(q8_stride(200), 224);
  EXPECT_EQ(q8_stride(4096), 4096);
}

}  // namespace
}  // namespace q8_weights_test
}  // namespace baton::cuda::kernels
#endif
