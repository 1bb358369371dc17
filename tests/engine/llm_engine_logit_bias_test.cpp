// logit_bias through the LLM engine on the tiny model: a biased request makes its steps
// hand logits to the host sampler instead of taking the runner's greedy picks (the path
// the CUDA runner takes too), a ban changes the greedy tokens exactly as excluding the
// token from each argmax would, a plain greedy request batched beside it is unchanged,
// +100 forces a token, and a bias token outside the vocabulary is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <limits>
#include <stdexcept>
#include <vector>

#include "baton/engine/llm/llm_engine.h"
#include "baton/engine/request.h"
#include "engine/llm_engine_fixture.h"

namespace baton {
namespace {

using testing::greedy_alone;
using testing::greedy_request;
using testing::LlmEngineTest;
using testing::prompt_of;

// Greedy tokens of `prompt` run alone with `banned` never picked.
std::vector<TokenId> greedy_banning(const LlamaModel& model, const std::vector<TokenId>& prompt,
                                    int count, TokenId banned) {
  KvCache cache(model.config(), static_cast<int>(prompt.size()) + count);
  std::vector<float> logits = forward(model, prompt, cache);
  const auto vocab = static_cast<std::ptrdiff_t>(model.config().vocab_size);
  std::vector<TokenId> out;
  while (static_cast<int>(out.size()) < count) {
    std::vector<float> last(logits.end() - vocab, logits.end());
    last[static_cast<std::size_t>(banned)] = -std::numeric_limits<float>::infinity();
    out.push_back(static_cast<TokenId>(std::max_element(last.begin(), last.end()) - last.begin()));
    if (static_cast<int>(out.size()) < count) logits = forward(model, {&out.back(), 1}, cache);
  }
  return out;
}

TEST_F(LlmEngineTest, ABanChangesTheGreedyTokensAndLeavesABatchedPlainRequestAlone) {
  LlmBatchOptions options;
  options.max_batch = 4;
  start(options);
  const std::vector<TokenId> prompt = prompt_of(12, 4);
  const std::vector<TokenId> plain = greedy_alone(model_, prompt, 6);
  const TokenId first = plain.front();
  GenerationRequest banning = greedy_request(1, prompt, 6);
  banning.params.sampling.logit_bias = {{first, -100.0f}};
  std::future<GenerationResult> biased = engine_->submit(std::move(banning));
  std::future<GenerationResult> unbiased = engine_->submit(greedy_request(2, prompt, 6));
  const GenerationResult b = biased.get();
  EXPECT_EQ(b.tokens, greedy_banning(model_, prompt, 6, first));
  EXPECT_NE(b.tokens.front(), first);
  EXPECT_EQ(std::count(b.tokens.begin(), b.tokens.end(), first), 0);
  EXPECT_EQ(unbiased.get().tokens, plain);
}

TEST_F(LlmEngineTest, PlusOneHundredMakesEveryTokenTheForcedOne) {
  start({});
  for (const double temperature : {0.0, 1.0}) {
    GenerationRequest request = greedy_request(3, prompt_of(9, 5), 8);
    request.params.sampling.temperature = temperature;
    request.params.sampling.seed = 1;
    request.params.sampling.logit_bias = {{42, 100.0f}};
    const GenerationResult result = engine_->submit(std::move(request)).get();
    EXPECT_EQ(result.tokens, std::vector<TokenId>(8, 42)) << "temperature " << temperature;
    for (const float logprob : result.logprobs) EXPECT_GT(logprob, -1e-3f);  // biased: ~0
  }
}

TEST_F(LlmEngineTest, ABiasTokenOutsideTheVocabularyIsRefused) {
  start({});
  GenerationRequest request = greedy_request(4, prompt_of(5, 6), 4);
  const auto vocab = static_cast<TokenId>(model_.config().vocab_size);
  request.params.sampling.logit_bias = {{3, 1.0f}, {vocab, 1.0f}};
  try {
    (void)engine_->submit(std::move(request)).get();
    ADD_FAILURE() << "a bias token outside the vocabulary was accepted";
  } catch (const TokenOutsideVocabulary& error) {
    // The one check of the request's ids: the field, the id, the engine's name, the range.
    EXPECT_EQ(error.field(), TokenOutsideVocabulary::Field::logit_bias);
    const std::string message = error.message_for("prompt");
    EXPECT_NE(message.find("'logit_bias' key \"" + std::to_string(vocab) + "\""), std::string::npos)
        << message;
    EXPECT_NE(message.find("'llm'"), std::string::npos) << message;
    EXPECT_NE(message.find("0 to " + std::to_string(vocab - 1)), std::string::npos) << message;
  }
}

TEST_F(LlmEngineTest, APromptTokenOutsideTheVocabularyIsRefusedByIndex) {
  start({});
  const auto vocab = static_cast<TokenId>(model_.config().vocab_size);
  try {
    (void)engine_->submit(greedy_request(4, {5, vocab + 7}, 4)).get();
    ADD_FAILURE() << "a prompt token outside the vocabulary was accepted";
  } catch (const TokenOutsideVocabulary& error) {
    EXPECT_EQ(error.field(), TokenOutsideVocabulary::Field::prompt);
    const std::string message = error.message_for("input");
    EXPECT_NE(message.find("token id " + std::to_string(vocab + 7) + " (input[1])"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace baton
