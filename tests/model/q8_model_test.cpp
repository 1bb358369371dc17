// A LlamaModel loaded with q8 weights (ModelLoadOptions::weights): its logits stay close to
// those of the same model in f32, in the decode path (1 to 4 rows: the q8 kernel) and the
// prefill path (more rows: dequantized tiles through sgemm), for every reference
// architecture and for shapes whose rows are no whole number of groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "baton/model/cpu/forward_pass.h"
#include "baton/model/writer/model_writer.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::kModels;
using testing::tokens_of;

// Logits of `tokens`: prefilled in one step, or (decode) one token per step.
std::vector<float> logits_of(const LlamaModel& model, const std::vector<TokenId>& tokens,
                             bool decode) {
  KvCache cache(model.config(), static_cast<int>(tokens.size()));
  if (!decode) return forward(model, tokens, cache);
  std::vector<float> all;
  for (const TokenId t : tokens) {
    const std::vector<float> step = forward(model, std::vector<TokenId>{t}, cache);
    all.insert(all.end(), step.begin(), step.end());
  }
  return all;
}

struct Closeness {
  double relative_rms = 0.0;    // rms of the differences over the f32 logits' deviation
  float worst_top1_gap = 0.0f;  // how far below q8's best the f32 argmax's q8 logit falls
};

Closeness compare(const std::vector<float>& q8, const std::vector<float>& f32, std::size_t vocab) {
  double mean = 0.0, spread = 0.0, error = 0.0;
  for (const float v : f32) mean += v;
  mean /= static_cast<double>(f32.size());
  for (std::size_t i = 0; i < f32.size(); ++i) {
    spread += (f32[i] - mean) * (f32[i] - mean);
    error += (q8[i] - f32[i]) * (q8[i] - f32[i]);
  }
  Closeness c;
  c.relative_rms = std::sqrt(error / spread);
  const auto v = static_cast<std::ptrdiff_t>(vocab);
  for (std::size_t row = 0; row < f32.size() / vocab; ++row) {
    const auto a = f32.begin() + static_cast<std::ptrdiff_t>(row * vocab);
    const auto b = q8.begin() + static_cast<std::ptrdiff_t>(row * vocab);
    const float gap = *std::max_element(b, b + v) - b[std::max_element(a, a + v) - a];
    c.worst_top1_gap = std::max(c.worst_top1_gap, gap);
  }
  return c;
}

// The tiny reference models are random: their logits (deviation about 1.6) have near ties,
// so the top-1 may flip between tokens whose q8 logits are within a small gap. Measured at
// the time of writing: relative rms 0.01-0.035 of the logits' deviation.
void expect_close(const LlamaModel& q8, const LlamaModel& f32, const std::string& name) {
  const auto vocab = static_cast<std::size_t>(f32.config().vocab_size);
  for (const bool decode : {true, false}) {
    const std::vector<TokenId> tokens = tokens_of(decode ? 6 : 12, 3);
    const Closeness c =
        compare(logits_of(q8, tokens, decode), logits_of(f32, tokens, decode), vocab);
    EXPECT_LT(c.relative_rms, 0.06) << name << (decode ? " decode" : " prefill");
    EXPECT_LT(c.worst_top1_gap, 0.25f) << name << (decode ? " decode" : " prefill");
  }
}

TEST(Q8Model, LogitsStayCloseToF32ForEveryReferenceArchitecture) {
  for (const char* name : {"qwen2", "llama", "mistral", "qwen3"}) {
    const LlamaModel q8 = LlamaModel::load(kModels / name, {.weights = WeightFormat::q8});
    const LlamaModel f32 = LlamaModel::load(kModels / name, {.weights = WeightFormat::f32});
    ASSERT_TRUE(q8.embedding().is_q8()) << name;
    ASSERT_TRUE(q8.output().is_q8()) << name;
    ASSERT_TRUE(q8.layers()[0].down.is_q8()) << name;
    // 1 byte a weight and a 4-byte scale per 32: a bit over a quarter of f32.
    EXPECT_LT(q8.weight_bytes(), f32.weight_bytes() * 3 / 10) << name;
    EXPECT_EQ(q8.weight_count(), f32.weight_count()) << name;
    expect_close(q8, f32, name);
  }
}

TEST(Q8Model, RowsOfPartialGroupsLoadAndStayClose) {
  testing::TempDir dir;
  ModelShape shape = model_shape("tiny", ModelArch::qwen2);
  shape.hidden_size = 72;  // rows of 72 and 100 weights: partial last groups
  shape.head_dim = 18;
  shape.intermediate_size = 100;
  write_model(dir.path(), ModelArch::qwen2, shape, 11);
  const LlamaModel q8 = LlamaModel::load(dir.path(), {.weights = WeightFormat::q8});
  const LlamaModel f32 = LlamaModel::load(dir.path(), {.weights = WeightFormat::f32});
  ASSERT_EQ(q8.layers()[0].q.q8().groups(), 3);
  expect_close(q8, f32, "tiny 72/100");
}

}  // namespace
}  // namespace baton
