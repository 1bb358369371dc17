// Q8Matrix and the q8 WeightMatrix: quantizing to 8 bits and back is within half a group's
// scale of every weight, whatever the magnitudes (tiny, huge, zero groups, a partial last
// group), and a q8 load rejects what 8 bits cannot hold.
#include "baton/model/weights/q8_matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "baton/model/weights/weight_matrix.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

// Rows whose groups span magnitudes from 1e-30 to 1e4, one group all zeros.
std::vector<float> varied_rows(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float magnitudes[] = {1e-30f, 1e-6f, 0.02f, 1.0f, 1e4f};
  std::vector<float> w(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const int group = c / Q8Matrix::kGroup;
      const float m = magnitudes[(r + group) % 5];
      w[static_cast<std::size_t>(r) * cols + c] = (r == 1 && group == 0) ? 0.0f : m * normal(rng);
    }
  }
  return w;
}

TEST(Q8Matrix, RoundTripIsWithinHalfAScaleOfEveryWeight) {
  for (const int cols : {32, 64, 100, 7}) {  // whole groups, and partial last groups
    const int rows = 6;
    const std::vector<float> w = varied_rows(rows, cols, static_cast<unsigned>(cols));
    Q8Matrix q(rows, cols);
    q.quantize_rows(0, rows, w.data());
    ASSERT_EQ(q.groups(), (cols + 31) / 32);
    ASSERT_EQ(q.stride(), q.groups() * 32);
    std::vector<float> back(w.size());
    q.dequantize_rows(0, rows, back.data());
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const std::size_t i = static_cast<std::size_t>(r) * cols + c;
        const float scale = q.row_scales(r)[c / 32];
        // q * s rounds once in f32: a relative 2^-24 on top of the s / 2 bound.
        EXPECT_LE(std::abs(w[i] - back[i]), scale / 2 + std::abs(w[i]) * 1e-6f)
            << "cols " << cols << " row " << r << " col " << c;
      }
      for (int g = 0; g < q.groups(); ++g) {
        float amax = 0.0f;
        for (int c = g * 32; c < std::min(cols, g * 32 + 32); ++c) {
          amax = std::max(amax, std::abs(w[static_cast<std::size_t>(r) * cols + c]));
        }
        EXPECT_FLOAT_EQ(q.row_scales(r)[g], amax / 127.0f) << "row " << r << " group " << g;
      }
    }
    EXPECT_TRUE(q.finite());
  }
}

TEST(Q8Matrix, ValuesStayWithin127AndThePaddingIsZero) {
  const int rows = 3, cols = 40;
  const std::vector<float> w = varied_rows(rows, cols, 5);
  Q8Matrix q(rows, cols);
  q.quantize_rows(0, rows, w.data());
  for (int r = 0; r < rows; ++r) {
    const std::int8_t* v = q.row_values(r);
    for (int c = 0; c < q.stride(); ++c) {
      EXPECT_GE(v[c], -127);  // never -128: the AVX2 kernel's sign trick relies on it
      if (c >= cols) {
        EXPECT_EQ(v[c], 0) << "padding at " << c;
      }
    }
    // The largest weight of each group maps to +-127 (row 1's first group is all zeros).
    for (int g = 0; g < q.groups(); ++g) {
      int largest = 0;
      for (int c = g * 32; c < g * 32 + 32; ++c) largest = std::max(largest, std::abs(int{v[c]}));
      EXPECT_EQ(largest, r == 1 && g == 0 ? 0 : 127) << "row " << r << " group " << g;
    }
  }
  EXPECT_EQ(q.row_scales(1)[0], 0.0f);  // the all-zero group
  EXPECT_EQ(q.bytes(), static_cast<std::size_t>(rows) * (64 + 2 * sizeof(float)));
}

TEST(Q8Matrix, QuantizeRowsFillsOnlyItsRows) {
  const int rows = 4, cols = 64;
  const std::vector<float> w = varied_rows(rows, cols, 9);
  Q8Matrix whole(rows, cols), parts(rows, cols);
  whole.quantize_rows(0, rows, w.data());
  parts.quantize_rows(2, 2, w.data() + 2 * cols);
  parts.quantize_rows(0, 2, w.data());
  for (int r = 0; r < rows; ++r) {
    EXPECT_TRUE(std::equal(whole.row_values(r), whole.row_values(r) + cols, parts.row_values(r)));
    EXPECT_TRUE(std::equal(whole.row_scales(r), whole.row_scales(r) + 2, parts.row_scales(r)));
  }
}

TEST(Q8Matrix, ANonFiniteWeightMakesItNotFinite) {
  std::vector<float> w(64, 0.5f);
  w[40] = std::numeric_limits<float>::quiet_NaN();
  Q8Matrix q(1, 64);
  q.quantize_rows(0, 1, w.data());
  EXPECT_FALSE(q.finite());
  w[40] = std::numeric_limits<float>::infinity();
  q.quantize_rows(0, 1, w.data());
  EXPECT_FALSE(q.finite());
}

// A model directory holding one f32 tensor "w" of [rows x cols].
void write_tensor(const testing::TempDir& dir, int rows, int cols, const std::vector<float>& w) {
  const std::string header = R"({"w": {"dtype": "F32", "shape": [)" + std::to_string(rows) + ", " +
                             std::to_string(cols) + R"(], "data_offsets": [0, )" +
                             std::to_string(w.size() * 4) + "]}}";
  testing::write_file(dir.path() / "model.safetensors",
                      testing::safetensors_bytes(header, testing::le_bytes(w)));
}

TEST(Q8WeightMatrix, LoadsQuantizedAndDequantizesRows) {
  testing::TempDir dir;
  const int rows = 1500, cols = 100;  // the load quantizes 655 rows at a time: 3 chunks
  const std::vector<float> w = varied_rows(rows, cols, 3);
  write_tensor(dir, rows, cols, w);
  const ModelWeights weights = ModelWeights::open(dir.path());
  const WeightMatrix m = WeightMatrix::load(weights, "w", rows, cols, WeightFormat::q8);
  ASSERT_TRUE(m.is_q8());
  EXPECT_FALSE(m.is_bf16());
  EXPECT_EQ(m.format(), WeightFormat::q8);
  EXPECT_EQ(m.f32_data(), nullptr);
  EXPECT_EQ(m.bf16_data(), nullptr);
  EXPECT_EQ(m.bytes(), m.q8().bytes());
  EXPECT_LT(m.bytes(), w.size() * 2);  // under bf16's size: 1 byte + 4 / 32 each, padded
  std::vector<float> row(cols);
  m.rows_to_float(123, 1, row.data());
  for (int c = 0; c < cols; ++c) {
    const float scale = m.q8().row_scales(123)[c / 32];
    const float expected = w[static_cast<std::size_t>(123) * cols + c];
    EXPECT_LE(std::abs(row[c] - expected), scale / 2 + std::abs(expected) * 1e-6f);
  }
  const WeightMatrix f32 = WeightMatrix::load(weights, "w", rows, cols, WeightFormat::f32);
  EXPECT_EQ(f32.format(), WeightFormat::f32);
  EXPECT_THROW(f32.q8(), std::logic_error);
}

TEST(Q8WeightMatrix, RefusesANonFiniteTensorNamingIt) {
  testing::TempDir dir;
  std::vector<float> w(2 * 32, 1.0f);
  w[33] = std::numeric_limits<float>::infinity();
  write_tensor(dir, 2, 32, w);
  const ModelWeights weights = ModelWeights::open(dir.path());
  try {
    WeightMatrix::load(weights, "w", 2, 32, WeightFormat::q8);
    FAIL() << "no ModelFileError";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w' holds an infinity or a NaN (row 1, column 1)"),
              std::string::npos)
        << e.what();
  }
  // Any format refuses it now (nonfinite_weights_test.cpp): f32 would answer in NaNs too.
  EXPECT_THROW(WeightMatrix::load(weights, "w", 2, 32, WeightFormat::f32), ModelFileError);
}

TEST(WeightFormat, ParsesItsThreeNames) {
  for (const WeightFormat f : {WeightFormat::bf16, WeightFormat::f32, WeightFormat::q8}) {
    EXPECT_EQ(parse_weight_format(to_string(f)), f);
  }
  EXPECT_FALSE(parse_weight_format("q4").has_value());
  EXPECT_FALSE(parse_weight_format("Q8").has_value());
}

}  // namespace
}  // namespace baton
