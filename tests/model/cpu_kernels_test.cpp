#include "baton/model/cpu/kernels/cpu_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/model/cpu/kernels/simd_kernels.h"
#include "baton/model/files/half.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

constexpr int kWidth = 96;
const std::vector<std::pair<std::string, int>> kMatrices = {{"q", 200}, {"k", 24}, {"v", 40}};

// Three bf16 matrices of one width (q/k/v-like, of different heights), written to a model
// directory; their values as floats by name.
std::map<std::string, std::vector<float>> write_matrices(const testing::TempDir& dir) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> mantissa(0, 127);
  std::string header = "{", data;
  std::map<std::string, std::vector<float>> values;
  for (const auto& [name, rows] : kMatrices) {
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows) * kWidth);
    for (std::uint16_t& b : bits) {  // in [-2, 2), either sign
      b = static_cast<std::uint16_t>(0x3f00 + mantissa(rng) + (mantissa(rng) % 2 ? 0x8000 : 0));
    }
    for (const std::uint16_t b : bits) values[name].push_back(bf16_to_float(b));
    const std::size_t begin = data.size();
    data += testing::le_bytes(bits);
    header += (header.size() > 1 ? ", \"" : "\"") + name + R"(": {"dtype": "BF16", "shape": [)" +
              std::to_string(rows) + ", " + std::to_string(kWidth) + R"(], "data_offsets": [)" +
              std::to_string(begin) + ", " + std::to_string(data.size()) + "]}";
  }
  testing::write_file(dir.path() / "model.safetensors",
                      testing::safetensors_bytes(header + "}", data));
  return values;
}

// linear() over several matrices at once gives each exactly what a product of its own
// gives (the same kernels on the same tiles), for every format, for decode batches and
// for more rows than the direct kernels take (sgemm); the bf16 results are within 1e-5
// of the magnitude of a float64 product of the same values (x rounded to bf16 where the
// kernel set multiplies bf16 pairs), bias included.
TEST(Linear, SeveralOutputsInOneLoopMatchEachAloneAndTheFloat64Reference) {
  testing::TempDir dir;
  const std::map<std::string, std::vector<float>> w = write_matrices(dir);
  const ModelWeights weights = ModelWeights::open(dir.path());
  ThreadPool pool(3);
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const WeightFormat format : {WeightFormat::bf16, WeightFormat::f32, WeightFormat::q8}) {
    std::vector<WeightMatrix> matrices;
    for (const auto& [name, rows] : kMatrices) {
      matrices.push_back(WeightMatrix::load(weights, name, rows, kWidth, format));
    }
    for (const int rows : {1, 3, 5, 16, 17}) {
      std::vector<float> x(static_cast<std::size_t>(rows) * kWidth), bias(200);
      for (float& v : x) v = uniform(rng);
      for (float& v : bias) v = uniform(rng);
      std::vector<std::vector<float>> together, alone;
      std::vector<LinearOutput> outputs;
      for (std::size_t m = 0; m < matrices.size(); ++m) {
        together.emplace_back(static_cast<std::size_t>(rows) * matrices[m].rows());
        alone.emplace_back(together.back().size());
      }
      for (std::size_t m = 0; m < matrices.size(); ++m) {
        const float* b = m == 0 ? bias.data() : nullptr;
        outputs.push_back({.w = &matrices[m], .bias = b, .y = together[m].data()});
        linear(pool, x.data(), rows, matrices[m], b, alone[m].data());
      }
      linear(pool, x.data(), rows, outputs);
      for (std::size_t m = 0; m < matrices.size(); ++m) {
        EXPECT_EQ(together[m], alone[m]) << to_string(format) << " rows " << rows << " m " << m;
        if (format == WeightFormat::q8) continue;  // its own bound: q8_kernels_test
        // A kernel set that multiplies bf16 pairs rounds x to bf16 for bf16 weights.
        const bool rounds_x =
            format == WeightFormat::bf16 && simd_kernels().dot_bf16x_rows != nullptr;
        const std::vector<float>& wm = w.at(kMatrices[m].first);
        for (int r = 0; r < rows; ++r) {
          for (int o = 0; o < matrices[m].rows(); ++o) {
            double want = m == 0 ? bias[o] : 0.0, magnitude = std::abs(want);
            for (int i = 0; i < kWidth; ++i) {
              const float xi =
                  rounds_x ? bf16_to_float(float_to_bf16(x[r * kWidth + i])) : x[r * kWidth + i];
              const double term = static_cast<double>(xi) * wm[o * kWidth + i];
              want += term;
              magnitude += std::abs(term);
            }
            EXPECT_NEAR(together[m][r * matrices[m].rows() + o], want, 1e-5 * magnitude)
                << to_string(format) << " rows " << rows << " m " << m << " o " << o;
          }
        }
      }
    }
  }
}

TEST(Linear, MatricesOfDifferentWidthsAreRefused) {
  testing::TempDir dir;
  write_matrices(dir);
  const ModelWeights weights = ModelWeights::open(dir.path());
  const WeightMatrix a = WeightMatrix::load(weights, "k", 24, kWidth, WeightFormat::f32);
  const WeightMatrix b = WeightMatrix::load(weights, "v", 40, kWidth, WeightFormat::f32);
  ThreadPool pool(2);
  std::vector<float> x(kWidth), ya(24), yb(40);
  const LinearOutput same[] = {{.w = &a, .bias = nullptr, .y = ya.data()},
                               {.w = &b, .bias = nullptr, .y = yb.data()}};
  EXPECT_NO_THROW(linear(pool, x.data(), 1, same));
  std::vector<float> wide_x(2 * kWidth);
  const std::string header =
      R"({"t": {"dtype": "F32", "shape": [2, 192], "data_offsets": [0, 1536]}})";
  testing::TempDir other;
  testing::write_file(other.path() / "model.safetensors",
                      testing::safetensors_bytes(header, std::string(1536, '\0')));
  const ModelWeights wide_weights = ModelWeights::open(other.path());
  const WeightMatrix wide = WeightMatrix::load(wide_weights, "t", 2, 192, WeightFormat::f32);
  std::vector<float> yw(2);
  const LinearOutput mixed[] = {{.w = &a, .bias = nullptr, .y = ya.data()},
                                {.w = &wide, .bias = nullptr, .y = yw.data()}};
  EXPECT_THROW(linear(pool, wide_x.data(), 1, mixed), std::invalid_argument);
}

}  // namespace
}  // namespace baton
