// The forward pass against Hugging Face transformers 5.17 (tests/data/models, made by
// scripts/make_reference_data.py on the GPU machine): tiny random llama (llama3 RoPE
// scaling, sharded safetensors), qwen2 (q/k/v bias, tied embeddings), qwen3 (q/k norm,
// head_dim != hidden/heads) and mistral models, f32, eager attention. Checked: the logits
// of every position for a 12-token prompt, within 1e-3 absolute, both in one forward and
// token by token through the KV cache; and 32 greedy tokens exactly.
#include "baton/model/llama_model.h"

#include "baton/model/cpu/forward_pass.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace baton {
namespace {

using testing::kModels;

constexpr float kTolerance = 1e-3f;

struct Reference {
  std::vector<TokenId> tokens;
  std::vector<std::vector<float>> logits;
  std::vector<TokenId> greedy;
};

Reference read_reference(const std::string& model) {
  std::ifstream in(kModels / model / "reference.json");
  const auto j = nlohmann::json::parse(in);
  return {.tokens = j["tokens"].get<std::vector<TokenId>>(),
          .logits = j["logits"].get<std::vector<std::vector<float>>>(),
          .greedy = j["greedy"].get<std::vector<TokenId>>()};
}

float max_difference(std::span<const float> ours, const std::vector<float>& theirs) {
  float worst = 0.0f;
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    worst = std::max(worst, std::abs(ours[i] - theirs[i]));
  }
  return worst;
}

class ReferenceModel : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferenceModel, LogitsMatchTransformersInOnePassAndTokenByToken) {
  const LlamaModel model = LlamaModel::load(kModels / GetParam());
  const Reference ref = read_reference(GetParam());
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  ASSERT_EQ(ref.logits.size(), ref.tokens.size());

  KvCache whole(model.config(), 64);
  const std::vector<float> logits = forward(model, ref.tokens, whole);
  KvCache stepwise(model.config(), 64);
  for (std::size_t t = 0; t < ref.tokens.size(); ++t) {
    const float prefill = max_difference({logits.data() + t * vocab, vocab}, ref.logits[t]);
    EXPECT_LT(prefill, kTolerance) << GetParam() << " position " << t;
    const std::vector<float> step =
        forward(model, std::span<const TokenId>(&ref.tokens[t], 1), stepwise);
    EXPECT_LT(max_difference(step, ref.logits[t]), kTolerance) << GetParam() << " step " << t;
  }
}

TEST_P(ReferenceModel, GreedyDecodingMatchesTransformers) {
  const LlamaModel model = LlamaModel::load(kModels / GetParam());
  const Reference ref = read_reference(GetParam());
  KvCache cache(model.config(), 64);
  std::vector<float> logits = forward(model, ref.tokens, cache);
  const auto vocab = static_cast<std::ptrdiff_t>(model.config().vocab_size);
  std::vector<TokenId> generated;
  for (std::size_t i = 0; i < ref.greedy.size(); ++i) {
    const auto last = logits.end() - vocab;
    const auto next = static_cast<TokenId>(std::max_element(last, logits.end()) - last);
    generated.push_back(next);
    logits = forward(model, std::span<const TokenId>(&next, 1), cache);
  }
  EXPECT_EQ(generated, ref.greedy) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Architectures, ReferenceModel,
                         ::testing::Values("llama", "qwen2", "qwen3", "mistral"));

TEST(LlamaModel, TheLayerHookRunsBetweenLayersAndTheCacheHasALimit) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen2");
  KvCache cache(model.config(), 4);  // rounded up to one block of 16
  EXPECT_EQ(cache.capacity(), 16);
  int calls = 0;
  const std::vector<TokenId> three{1, 2, 3};
  forward(model, three, cache, [&] { ++calls; });
  EXPECT_EQ(calls, model.config().num_layers - 1);
  EXPECT_EQ(cache.length(), 3);
  const std::vector<TokenId> fourteen(14, 1);
  EXPECT_THROW(forward(model, fourteen, cache), std::length_error);
  EXPECT_EQ(cache.length(), 3);
  const std::vector<TokenId> bad{9999};
  KvCache other(model.config(), 4);
  EXPECT_THROW(forward(model, bad, other), std::out_of_range);
}

}  // namespace
}  // namespace baton
