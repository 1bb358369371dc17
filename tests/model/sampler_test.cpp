#include "baton/model/output/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace baton {
namespace {

TEST(Sampler, GreedyPicksTheLargestAndReportsItsLogProbability) {
  Sampler greedy({.temperature = 0.0});
  const std::vector<float> logits{1.0f, 3.0f, 2.0f};
  const SampledToken t = greedy.next(logits, {}, {});
  EXPECT_EQ(t.id, 1);
  // log(e^3 / (e^1 + e^3 + e^2)) = -log(1 + e^-2 + e^-1) = -0.40760596
  EXPECT_NEAR(t.logprob, -0.40760596f, 1e-6f);
}

TEST(Sampler, GreedyTokenIsWhatAPlainGreedySamplerPicks) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  SamplingParams greedy;
  greedy.temperature = 0.0;
  ASSERT_TRUE(is_plain_greedy(greedy));
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> logits(1000);
    for (float& l : logits) l = normal(rng);
    logits[static_cast<std::size_t>(trial * 7 + 100)] =
        logits[static_cast<std::size_t>(trial * 7 + 3)] = 30.0f;
    const GreedyToken picked = greedy_token(logits);
    const SampledToken sampled = Sampler(greedy).next(logits, {}, {});
    EXPECT_EQ(picked.token, sampled.id);  // the lower id of the tie
    EXPECT_EQ(picked.token, trial * 7 + 3);
    EXPECT_FLOAT_EQ(picked.logprob, sampled.logprob);
    EXPECT_TRUE(picked.finite);
  }
  std::vector<float> bad(10, 1.0f);
  bad[4] = std::nanf("");
  EXPECT_FALSE(greedy_token(bad).finite);
  SamplingParams penalized = greedy;
  penalized.repetition_penalty = 1.1;
  EXPECT_FALSE(is_plain_greedy(penalized));
  SamplingParams reporting = greedy;
  reporting.top_logprobs = 2;
  EXPECT_FALSE(is_plain_greedy(reporting));
  EXPECT_FALSE(is_plain_greedy(SamplingParams{}));  // temperature 1
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  // Token 1 (3.0) was seen: 3 / 2 = 1.5 < 2.0, so token 2 wins. Token 0 (-1) seen: -2.
  Sampler greedy({.temperature = 0.0, .repetition_penalty = 2.0});
  const std::vector<float> logits{-1.0f, 3.0f, 2.0f};
  const std::vector<TokenId> context{1, 0, 1};
  EXPECT_EQ(greedy.next(logits, context, {}).id, 2);
}

TEST(Sampler, SamplingFollowsTheDistributionAndTheSeedRepeats) {
  // Probabilities at temperature 1: softmax(0, ln 3) = (1/4, 3/4).
  const std::vector<float> logits{0.0f, std::log(3.0f)};
  Sampler a({.temperature = 1.0, .seed = 7});
  Sampler b({.temperature = 1.0, .seed = 7});
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const TokenId x = a.next(logits, {}, {}).id;
    EXPECT_EQ(x, b.next(logits, {}, {}).id);
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
    for (int i = 0; i < 4000; ++i) ++seen[s.next(logits, {}, {}).id];
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
  EXPECT_THROW(Sampler({.presence_penalty = 2.5}), std::invalid_argument);
  EXPECT_THROW(Sampler({.presence_penalty = std::nan("")}), std::invalid_argument);
  EXPECT_THROW(Sampler({.frequency_penalty = -2.1}), std::invalid_argument);
  EXPECT_THROW(Sampler({.top_logprobs = 21}), std::invalid_argument);
  EXPECT_THROW(Sampler({.top_logprobs = -1}), std::invalid_argument);
  EXPECT_NO_THROW(
      Sampler({.presence_penalty = -2.0, .frequency_penalty = 2.0, .top_logprobs = 20}));
}

// OpenAI: logit[j] -= count[j] * frequency + (count[j] > 0) * presence, over the generated
// tokens only. Greedy choices on either side of the hand-computed boundary show the exact
// amounts (the margins, 0.02 and more, are far above float rounding).
TEST(Sampler, PresenceAndFrequencyPenaltiesSubtractWhatOpenAiSays) {
  const std::vector<float> logits{2.0f, 1.9f, 0.0f};
  const std::vector<TokenId> once{0}, twice{0, 0}, prompt{0, 0, 0, 0};
  const auto pick = [&](double presence, double frequency, std::span<const TokenId> generated) {
    Sampler greedy(
        {.temperature = 0.0, .presence_penalty = presence, .frequency_penalty = frequency});
    return greedy.next(logits, prompt, generated).id;
  };
  EXPECT_EQ(pick(0.05, 0.0, once), 0);   // 2.0 - 0.05 = 1.95 > 1.9
  EXPECT_EQ(pick(0.2, 0.0, once), 1);    // 2.0 - 0.2 = 1.8 < 1.9
  EXPECT_EQ(pick(0.0, 0.04, twice), 0);  // 2.0 - 2 * 0.04 = 1.92
  EXPECT_EQ(pick(0.0, 0.06, twice), 1);  // 2.0 - 2 * 0.06 = 1.88
  EXPECT_EQ(pick(0.06, 0.0, twice), 0);  // presence counts once: 1.94
  EXPECT_EQ(pick(2.0, 2.0, {}), 0);      // the prompt alone is never penalized
  // Negative values encourage a token: token 2 reaches 0 + 2 * 1.0 + 0.5 = 2.5 > 2.0.
  const std::vector<TokenId> used_two{2, 2};
  EXPECT_EQ(pick(-0.5, -1.0, used_two), 2);
  // The reported log-probability is the raw distribution's, penalties or not.
  Sampler penalized({.temperature = 0.0, .presence_penalty = 0.2});
  const SampledToken t = penalized.next(logits, {}, once);
  // log(e^1.9 / (e^2 + e^1.9 + e^0)) = 1.9 - log(e^2 + e^1.9 + 1) = -0.79126
  EXPECT_NEAR(t.logprob, 1.9 - std::log(std::exp(2.0) + std::exp(1.9) + 1.0), 1e-6);
}

// Sampled at temperature 1, the penalized distribution is softmax of the hand-computed
// logits: (0, 1 - (2 * 0.25 + 0.5), ln 2 - (0.25 + 0.5)) = (0, 0, ln 2 - 0.75).
TEST(Sampler, PenaltiesShapeTheSampledDistribution) {
  const std::vector<float> logits{0.0f, 1.0f, std::log(2.0f)};
  const std::vector<TokenId> generated{1, 2, 1};
  Sampler s({.temperature = 1.0, .presence_penalty = 0.5, .frequency_penalty = 0.25, .seed = 3});
  const std::vector<double> adjusted{0.0, 0.0, std::log(2.0) - 0.75};
  double total = 0.0;
  for (double a : adjusted) total += std::exp(a);
  std::vector<int> seen(3, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++seen[s.next(logits, {}, generated).id];
  for (std::size_t j = 0; j < 3; ++j) {
    const double p = std::exp(adjusted[j]) / total;
    const double sd = std::sqrt(n * p * (1 - p));  // binomial; 5 sd either way
    EXPECT_NEAR(seen[j], n * p, 5 * sd) << "token " << j;
  }
}

// Against an independent log softmax in long double over 50 seeded logits: the same
// tokens in the same order, log-probabilities within 1e-5, whatever was sampled.
TEST(Sampler, TopLogprobsAreTheRawDistributionsMostLikelyTokens) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(50);
  for (float& l : logits) l = normal(rng);
  long double total = 0.0L;
  for (float l : logits) total += std::exp(static_cast<long double>(l));
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](TokenId a, TokenId b) { return logits[a] > logits[b]; });

  Sampler s({.temperature = 1.0,
             .repetition_penalty = 1.3,
             .frequency_penalty = 1.0,
             .top_logprobs = 5,
             .seed = 2});
  const std::vector<TokenId> generated{order[0], order[1]};  // penalties change the pick only
  const SampledToken t = s.next(logits, generated, generated);
  ASSERT_EQ(t.top.size(), 5u);
  for (std::size_t i = 0; i < t.top.size(); ++i) {
    EXPECT_EQ(t.top[i].token, order[i]) << i;
    const long double reference = logits[order[i]] - std::log(total);
    EXPECT_NEAR(t.top[i].logprob, static_cast<double>(reference), 1e-5) << i;
  }
  EXPECT_NEAR(t.logprob, static_cast<double>(logits[t.id] - std::log(total)), 1e-5);

  // More asked for than the vocabulary holds: all of it. None asked for: none.
  Sampler all({.temperature = 0.0, .top_logprobs = 20});
  EXPECT_EQ(all.next(std::vector<float>{1.0f, 3.0f, 2.0f}, {}, {}).top.size(), 3u);
  Sampler none({.temperature = 0.0});
  EXPECT_TRUE(none.next(logits, {}, {}).top.empty());
}

// Many ties, over a vocabulary longer than a few SIMD lanes: the greedy pick and the top
// list are those of a stable sort by logit (ties: the lower id first).
TEST(Sampler, TiesGoToTheLowerIdAsAStableSortPutsThem) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> level(0, 9);
  std::vector<float> logits(3001);
  for (float& l : logits) l = static_cast<float>(level(rng)) * 0.5f;
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](TokenId a, TokenId b) { return logits[a] > logits[b]; });

  Sampler greedy({.temperature = 0.0, .top_logprobs = 20});
  const SampledToken t = greedy.next(logits, {}, {});
  EXPECT_EQ(t.id, order[0]);
  ASSERT_EQ(t.top.size(), 20u);
  for (std::size_t i = 0; i < t.top.size(); ++i) EXPECT_EQ(t.top[i].token, order[i]) << i;
  // The largest logit alone in the last, partial group of lanes.
  logits.back() = 100.0f;
  EXPECT_EQ(Sampler({.temperature = 0.0}).next(logits, {}, {}).id, 3000);
}

}  // namespace
}  // namespace baton
