// ForwardPass with a batch: sequences of different lengths, in prefill chunks and decode
// steps side by side, on blocks handed out out of order, give the logits each gives alone
// (KvCache, itself checked against transformers in llama_model_test.cpp).
#include "baton/model/cpu/forward_pass.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "baton/model/cpu/kernels/simd_kernels.h"
#include "baton/model/writer/model_writer.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::kModels;
using testing::tokens_of;

TEST(ForwardPass, ABatchGivesTheLogitsOfEachSequenceAlone) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen3");
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  const std::vector<std::vector<TokenId>> prompts{tokens_of(21, 1), tokens_of(5, 2),
                                                  tokens_of(9, 3)};
  KvBlockPool pool(model.config(), 4, KvBlockPool::block_bytes(model.config(), 4) * 24);
  KvMemory memory(model.config(), pool);
  std::vector<KvSequence> sequences(prompts.size());
  for (int b = 0; b < 6; ++b) {  // interleaved, so no sequence has contiguous blocks
    for (KvSequence& s : sequences) s.blocks.push_back(*pool.allocate());
  }
  // Step 1: the first 16 tokens of sequence 0, all of sequence 1, 4 of sequence 2.
  // Step 2: the rest of sequences 0 and 2, and one more token after sequence 1.
  const std::vector<std::pair<int, int>> step1{{0, 16}, {0, 5}, {0, 4}};
  const std::vector<std::pair<int, int>> step2{{16, 21}, {5, 6}, {4, 9}};
  std::vector<std::vector<TokenId>> full = prompts;
  full[1].push_back(42);
  std::vector<std::vector<float>> batched(prompts.size());
  for (const auto* plan : {&step1, &step2}) {
    std::vector<SequenceStep> steps;
    for (std::size_t s = 0; s < prompts.size(); ++s) {
      const auto [from, to] = (*plan)[s];
      steps.push_back({{full[s].begin() + from, full[s].begin() + to}, &sequences[s]});
    }
    ForwardPass pass(model, memory, std::move(steps), LogitsFor::every_token);
    for (int i = 0; i < pass.layers(); ++i) pass.run_layer(i);
    const std::vector<float> logits = pass.finish();
    std::size_t row = 0;
    for (std::size_t s = 0; s < prompts.size(); ++s) {
      const auto [from, to] = (*plan)[s];
      batched[s].insert(batched[s].end(), logits.begin() + row * vocab,
                        logits.begin() + (row + to - from) * vocab);
      row += to - from;
    }
  }
  for (std::size_t s = 0; s < prompts.size(); ++s) {
    EXPECT_EQ(sequences[s].length, static_cast<int>(full[s].size()));
    KvCache alone(model.config(), 32);
    const std::vector<float> expected = forward(model, full[s], alone);
    ASSERT_EQ(batched[s].size(), expected.size());
    float worst = 0.0f;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      worst = std::max(worst, std::abs(batched[s][i] - expected[i]));
    }
    EXPECT_LT(worst, 1e-4f) << "sequence " << s;
  }
}

TEST(ForwardPass, LastTokenLogitsAreOneRowPerSequence) {
  const LlamaModel model = LlamaModel::load(kModels / "llama");
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  KvBlockPool pool(model.config(), 8, KvBlockPool::block_bytes(model.config(), 8) * 4);
  KvMemory memory(model.config(), pool);
  KvSequence a{.blocks = {*pool.allocate()}, .length = 0}, b{{*pool.allocate()}, 0};
  ForwardPass pass(model, memory, {{tokens_of(7, 1), &a}, {tokens_of(3, 2), &b}},
                   LogitsFor::last_token);
  for (int i = 0; i < pass.layers(); ++i) pass.run_layer(i);
  const std::vector<float> logits = pass.finish();
  ASSERT_EQ(logits.size(), 2 * vocab);
  KvCache alone(model.config(), 8);
  const std::vector<float> expected = forward(model, tokens_of(7, 1), alone);
  for (std::size_t i = 0; i < vocab; ++i) {
    EXPECT_NEAR(logits[i], expected[6 * vocab + i], 1e-4f);
  }
  EXPECT_THROW(ForwardPass(model, memory, {{tokens_of(2, 1), &a}}, LogitsFor::last_token),
               std::length_error);  // 7 + 2 > one block of 8
}

// bf16 weights read in place (the direct kernel for up to 4 rows, widened tiles for more)
// against the same weights widened to f32 at load, which is the path checked against
// transformers: only the order of the sums differs, unless the kernel set multiplies bf16
// pairs (AVX-512 BF16), which rounds each activation to bf16 (up to 2^-9 of it) before
// every product: then the logits of this model move by up to 2.6e-3 (measured), and 1e-2
// still tells a wrong product (a weight or row out of place moves them by O(1)).
TEST(ForwardPass, Bf16KeptInPlaceMatchesBf16WidenedAtLoad) {
  testing::TempDir dir;
  ModelShape shape = model_shape("tiny", ModelArch::qwen2);
  shape.hidden_size = 72;  // rows of 72 and 100 floats: the kernels' tails run too
  shape.head_dim = 18;
  shape.intermediate_size = 100;
  write_model(dir.path(), ModelArch::qwen2, shape, 11);
  const LlamaModel kept = LlamaModel::load(dir.path(), {.weights = WeightFormat::bf16});
  const LlamaModel widened = LlamaModel::load(dir.path(), {.weights = WeightFormat::f32});
  ASSERT_EQ(kept.config().dtype, "bfloat16");
  EXPECT_LT(kept.weight_bytes() * 3 / 2, widened.weight_bytes());
  const bool rounded = simd_kernels().dot_bf16x_rows != nullptr;
  for (const int count : {1, 3, 9}) {
    KvCache a(kept.config(), 16), b(widened.config(), 16);
    const std::vector<float> la = forward(kept, tokens_of(count, count), a);
    const std::vector<float> lb = forward(widened, tokens_of(count, count), b);
    ASSERT_EQ(la.size(), lb.size());
    float worst = 0.0f;
    for (std::size_t i = 0; i < la.size(); ++i) worst = std::max(worst, std::abs(la[i] - lb[i]));
    EXPECT_LT(worst, rounded ? 1e-2f : 1e-4f) << count << " rows";
  }
}

}  // namespace
}  // namespace baton
