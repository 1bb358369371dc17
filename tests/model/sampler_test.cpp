#include "baton/model/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace baton {
namespace {

TEST(Sampler, GreedyPicksTheLargestAndReportsItsLogProbability) {
  Sampler greedy({.temperature = 0.0});
  const std::vector<float> logits{1.0f, 3.0f, 2.0f};
  const SampledToken t = greedy.next(logits, {});
  EXPECT_EQ(t.id, 1);
  // log(e^3 / (e^1 + e^3 + e^2)) = -log(1 + e^-2 + e^-1) = -0.40760596
  EXPECT_NEAR(t.logprob, -0.40760596f, 1e-6f);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  // Token 1 (3.0) was seen: 3 / 2 = 1.5 < 2.0, so token 2 wins. Token 0 (-1) seen: -2.
  Sampler greedy({.temperature = 0.0, .repetition_penalty = 2.0});
  const std::vector<float> logits{-1.0f, 3.0f, 2.0f};
  const std::vector<TokenId> context{1, 0, 1};
  EXPECT_EQ(greedy.next(logits, context).id, 2);
}

TEST(Sampler, SamplingFollowsTheDistributionAndTheSeedRepeats) {
  // Probabilities at temperature 1: softmax(0, ln 3) = (1/4, 3/4).
  const std::vector<float> logits{0.0f, std::log(3.0f)};
  Sampler a({.temperature = 1.0, .seed = 7});
  Sampler b({.temperature = 1.0, .seed = 7});
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const TokenId x = a.next(logits, {}).id;
    EXPECT_EQ(x, b.next(logits, {}).id);
    ones += x;
  }
  // Binomial(20000, 3/4): sd = sqrt(20000 * 3/16) = 61; 5 sd either way.
  EXPECT_NEAR(ones, 15000, 5 * 61);
}

TEST(Sampler, TopKTopPAndMinPCutTheTail) {
  const std::vector<float> logits{std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  const auto support = [&](SamplingParams p) {
    p.seed = 1;
    Sampler s(p);
    std::map<TokenId, int> seen;
    for (int i = 0; i < 4000; ++i) ++seen[s.next(logits, {}).id];
    return seen.size();
  };
  EXPECT_EQ(support({.top_k = 2}), 2u);
  EXPECT_EQ(support({.top_p = 0.75}), 2u);  // 0.5 < 0.75, 0.5 + 0.3 >= 0.75
  EXPECT_EQ(support({.top_p = 0.85}), 3u);
  EXPECT_EQ(support({.min_p = 0.2}), 3u);  // 0.05 < 0.2 * 0.5
  EXPECT_EQ(support({}), 4u);
}

TEST(Sampler, RejectsParametersOutOfRange) {
  EXPECT_THROW(Sampler({.temperature = -1.0}), std::invalid_argument);
  EXPECT_THROW(Sampler({.top_k = -1}), std::invalid_argument);
  EXPECT_THROW(Sampler({.top_p = 0.0}), std::invalid_argument);
  EXPECT_THROW(Sampler({.min_p = 1.5}), std::invalid_argument);
  EXPECT_THROW(Sampler({.repetition_penalty = 0.0}), std::invalid_argument);
}

}  // namespace
}  // namespace baton
