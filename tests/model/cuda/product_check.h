// What the 8-bit product tests share (fp8_weights_test, q8_weights_test): a product kernel
// run on random bf16 rows of x at several row counts, each result against a double product
// of x and the weights as the test decodes them. y starts at 0.5 and the kernel adds to it
// with beta 1; tolerance 1e-5 of the sum of the terms' magnitudes (exact bf16 products,
// f32 sums: a wrong scale, group or pairing is off by the result itself).
// Thread-safety: plain functions; each test owns its buffers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <vector>

#include "baton/model/cuda/decode_gemm.h"
#include "model/cuda/device_data.h"

namespace baton::cuda::test_data {

template <typename Code>
using EightBitProduct = cudaError_t (*)(const kernels::bf16*, int, const Code*, const float*, int,
                                        int, float*, float, cudaStream_t);

// `product` of codes and scales (on the device) [out x in] at each of `row_counts`, against
// `weight(f, k)`, the decoded weight of feature f at inner index k.
template <typename Code, typename Weight>
void expect_product_matches(EightBitProduct<Code> product, const Code* codes, const float* scales,
                            const Weight& weight, int out, int in,
                            const std::vector<int>& row_counts) {
  const Matrix x = random_matrix(static_cast<std::size_t>(kernels::kDecodeMaxRows) * in, 6);
  const std::unique_ptr<DeviceBuffer> xs = upload(x.bits.data(), x.bits.size() * 2);
  for (const int rows : row_counts) {
    const std::vector<float> initial(static_cast<std::size_t>(rows) * out, 0.5f);
    const std::unique_ptr<DeviceBuffer> y = upload(initial.data(), initial.size() * 4);
    BATON_CUDA_CHECK(product(static_cast<const kernels::bf16*>(xs->get()), rows, codes, scales, out,
                             in, static_cast<float*>(y->get()), 1.0f, nullptr));
    const std::vector<float> got = download<float>(*y, initial.size());
    for (int r = 0; r < rows; ++r) {
      for (int f = 0; f < out; ++f) {
        double sum = 0.0, magnitude = 0.0;
        for (int k = 0; k < in; ++k) {
          const double term = x.values[static_cast<std::size_t>(r) * in + k] * weight(f, k);
          sum += term;
          magnitude += std::fabs(term);
        }
        ASSERT_NEAR(got[static_cast<std::size_t>(r) * out + f], 0.5 + sum, 1e-5 * magnitude + 1e-6)
            << out << " x " << in << ", rows " << rows << ", row " << r << ", feature " << f;
      }
    }
  }
}

}  // namespace baton::cuda::test_data
