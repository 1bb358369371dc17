// The host's E4M3 rounding (what `--weights fp8` holds, for the CPU's accuracy figures)
// against a reference written from the format's definition (OCP FP8 E4M3: codes 0x00-0x7e
// of each sign are finite, 0x7f NaN; exponent bias 7, 3 mantissa bits, subnormals below
// 2^-6): every value's nearest code found by search over the 127 magnitudes, ties to the
// even code; and a model loaded with emulate_fp8 holds every matrix but the embedding as
// such values at its rows' scales.
#include "baton/model/weights/e4m3_rounding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "baton/model/llama_model.h"
#include "baton/model/writer/model_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

double magnitude_of(int code) {  // code 0x00-0x7e
  const int exponent = code >> 3;
  const int mantissa = code & 7;
  return exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
}

// The nearest E4M3 value by search; ties to the even code; beyond 448, 448.
float reference(float v) {
  const double target = std::fabs(static_cast<double>(v));
  int best = 0;
  for (int code = 1; code <= 0x7e; ++code) {
    const double d = std::fabs(magnitude_of(code) - target);
    const double best_d = std::fabs(magnitude_of(best) - target);
    if (d < best_d || (d == best_d && code % 2 == 0)) best = code;
  }
  return std::copysign(static_cast<float>(magnitude_of(best)), v);
}

TEST(E4m3Rounding, KnownValues) {
  EXPECT_EQ(round_to_e4m3(1.0f), 1.0f);
  EXPECT_EQ(round_to_e4m3(1.0625f), 1.0f);   // between 1 and 1.125: the even code
  EXPECT_EQ(round_to_e4m3(1.1875f), 1.25f);  // between 1.125 and 1.25: the even code
  EXPECT_EQ(round_to_e4m3(448.0f), 448.0f);
  EXPECT_EQ(round_to_e4m3(1000.0f), 448.0f);  // saturates, as the device's SATFINITE
  EXPECT_EQ(round_to_e4m3(-1000.0f), -448.0f);
  EXPECT_EQ(round_to_e4m3(std::ldexp(1.0f, -9)), std::ldexp(1.0f, -9));  // smallest
  EXPECT_EQ(round_to_e4m3(std::ldexp(1.0f, -10)), 0.0f);                 // tie: to 0
  EXPECT_EQ(round_to_e4m3(3 * std::ldexp(1.0f, -10)), std::ldexp(1.0f, -8));
  EXPECT_TRUE(std::isnan(round_to_e4m3(std::numeric_limits<float>::quiet_NaN())));
}

TEST(E4m3Rounding, EveryValueGoesToTheNearestCode) {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 9.5f);
  for (int i = 0; i < 20000; ++i) {
    const float v = (i % 2 ? -1.0f : 1.0f) * std::exp2(exponent(random));
    ASSERT_EQ(round_to_e4m3(v), reference(v)) << v;
  }
  for (int code = 0; code < 0x7e; ++code) {  // each midpoint: a tie
    const auto mid = static_cast<float>((magnitude_of(code) + magnitude_of(code + 1)) / 2);
    ASSERT_EQ(round_to_e4m3(mid), reference(mid)) << code;
  }
}

TEST(E4m3Rounding, ARowKeepsItsLargestMagnitudeAndOnlyE4m3MultiplesOfItsScale) {
  std::vector<float> row{0.5f, -3.0f, 0.001f, 2.9f, 0.0f, 1e-6f};
  round_row_through_e4m3(row.data(), static_cast<int>(row.size()));
  EXPECT_EQ(row[1], -3.0f);
  const float scale = 3.0f / 448.0f;
  for (const float v : row) EXPECT_EQ(v, round_to_e4m3(v / scale) * scale) << v;
  std::vector<float> zeros(4, 0.0f);
  round_row_through_e4m3(zeros.data(), 4);
  EXPECT_EQ(zeros, std::vector<float>(4, 0.0f));
}

TEST(E4m3Rounding, GroupsOfARowKeepTheirOwnScales) {
  std::vector<float> original(80, 0.001f);
  original[3] = 2.0f;    // the first group's largest
  original[40] = 0.01f;  // the second's; the third (64-79) keeps 0.001 as its largest
  std::vector<float> grouped = original, whole = original;
  round_row_through_e4m3(grouped.data(), 80, 32);
  round_row_through_e4m3(whole.data(), 80);
  for (int i = 0; i < 80; ++i) {
    const float scale = (i < 32 ? 2.0f : i < 64 ? 0.01f : 0.001f) / 448.0f;
    EXPECT_EQ(grouped[i], round_to_e4m3(original[i] / scale) * scale) << i;
  }
  EXPECT_EQ(grouped[70], 0.001f);  // its group's largest, exact
  EXPECT_NE(whole[70], 0.001f);    // at the row's scale, 2 / 448, it is not
}

TEST(E4m3Rounding, AModelEmulatingFp8HoldsItsMatricesSoButTheEmbedding) {
  testing::TempDir dir;
  ModelShape shape = model_shape("tiny", ModelArch::llama);
  shape.tie_word_embeddings = false;
  write_model(dir.path(), ModelArch::llama, shape, 5);
  const LlamaModel plain = LlamaModel::load(dir.path());
  const LlamaModel fp8 = LlamaModel::load(dir.path(), {.emulate_fp8 = true});
  const auto rows_of = [](const WeightMatrix& m) {
    std::vector<float> v(static_cast<std::size_t>(m.rows()) * m.cols());
    m.rows_to_float(0, m.rows(), v.data());
    return v;
  };
  EXPECT_EQ(rows_of(fp8.embedding()), rows_of(plain.embedding()));
  for (const auto& [ours, theirs] : {std::pair{&fp8.layers()[0].down, &plain.layers()[0].down},
                                     std::pair{&fp8.output(), &plain.output()}}) {
    ASSERT_NE(ours->f32_data(), nullptr);
    std::vector<float> expected = rows_of(*theirs);
    for (int r = 0; r < theirs->rows(); ++r) {
      round_row_through_e4m3(expected.data() + static_cast<std::size_t>(r) * theirs->cols(),
                             theirs->cols());
    }
    EXPECT_EQ(rows_of(*ours), expected);
    EXPECT_NE(rows_of(*ours), rows_of(*theirs));  // random weights: rounding moves some
  }
}

}  // namespace
}  // namespace baton
