// What a server needs of LlmEngine, on the tiny qwen2 model with real threads: top
// logprobs and the OpenAI penalties reach every token.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "engine/llm_engine_fixture.h"

namespace baton {
namespace {

using testing::greedy_alone;
using testing::greedy_request;
using testing::prompt_of;
using LlmEngineServingTest = testing::LlmEngineTest;

TEST_F(LlmEngineServingTest, TopLogprobsComeWithEveryTokenInTheDeltasAndTheResult) {
  start({});
  GenerationRequest r = greedy_request(1, prompt_of(20, 4), 6);
  r.params.sampling.top_logprobs = 3;
  std::mutex mu;
  std::vector<TokenDelta> deltas;
  r.on_token = [&](const TokenDelta& d) {
    std::lock_guard lock(mu);
    deltas.push_back(d);
  };
  const GenerationResult result = engine_->submit(std::move(r)).get();
  std::lock_guard lock(mu);
  ASSERT_EQ(result.top_logprobs.size(), result.tokens.size());
  ASSERT_EQ(deltas.size(), result.tokens.size());
  for (std::size_t i = 0; i < result.tokens.size(); ++i) {
    const std::vector<TopLogprob>& top = result.top_logprobs[i];
    ASSERT_EQ(top.size(), 3u);
    EXPECT_EQ(top[0].token, result.tokens[i]);  // greedy takes the most likely
    EXPECT_EQ(top[0].logprob, result.logprobs[i]);
    EXPECT_GE(top[0].logprob, top[1].logprob);
    EXPECT_GE(top[1].logprob, top[2].logprob);
    ASSERT_EQ(deltas[i].top.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(deltas[i].top[k].token, top[k].token);
      EXPECT_EQ(deltas[i].top[k].logprob, top[k].logprob);
    }
  }
  EXPECT_TRUE(engine_->submit(greedy_request(2, prompt_of(20, 4), 6)).get().top_logprobs.empty());
}

// Greedy with OpenAI's penalties over the generated tokens only, token by token through
// a KvCache: the reference the engine must match.
std::vector<TokenId> penalized_alone(const LlamaModel& model, const std::vector<TokenId>& prompt,
                                     int count, float presence, float frequency) {
  KvCache cache(model.config(), static_cast<int>(prompt.size()) + count);
  std::vector<float> logits = forward(model, prompt, cache);
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  std::vector<int> seen(vocab, 0);
  std::vector<TokenId> out;
  while (static_cast<int>(out.size()) < count) {
    std::vector<float> last(logits.end() - static_cast<std::ptrdiff_t>(vocab), logits.end());
    for (std::size_t j = 0; j < vocab; ++j) {
      if (seen[j] > 0) last[j] -= static_cast<float>(seen[j] * frequency + presence);
    }
    out.push_back(static_cast<TokenId>(std::max_element(last.begin(), last.end()) - last.begin()));
    ++seen[static_cast<std::size_t>(out.back())];
    if (static_cast<int>(out.size()) < count) logits = forward(model, {&out.back(), 1}, cache);
  }
  return out;
}

TEST_F(LlmEngineServingTest, PenaltiesApplyToTheGeneratedTokensOfEachRequest) {
  start({});
  const std::vector<TokenId> prompt = prompt_of(12, 7);
  GenerationRequest r = greedy_request(1, prompt, 24);
  r.params.sampling.presence_penalty = 1.5;
  r.params.sampling.frequency_penalty = 0.5;
  std::future<GenerationResult> penalized = engine_->submit(std::move(r));
  std::future<GenerationResult> plain = engine_->submit(greedy_request(2, prompt, 24));
  const std::vector<TokenId> reference = penalized_alone(model_, prompt, 24, 1.5f, 0.5f);
  EXPECT_EQ(penalized.get().tokens, reference);
  const std::vector<TokenId> unpenalized = plain.get().tokens;
  EXPECT_EQ(unpenalized, greedy_alone(model_, prompt, 24));
  EXPECT_NE(reference, unpenalized) << "the penalties changed nothing: a weak test";
}

}  // namespace
}  // namespace baton
