// OpenAI's logit_bias in the Sampler, against an independent reference: numpy's biased
// softmax, greedy pick and log-probabilities for fixed logits and bias maps
// (scripts/reference/make_logit_bias_reference.py -> tests/data/sampler/logit_bias.json);
// and, over many seeded draws, that -100 bans a token and +100 forces one.
#include "baton/model/output/logit_bias.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "baton/model/output/sampler.h"

namespace baton {
namespace {

struct ReferenceCase {
  std::string name;
  std::vector<float> logits;
  LogitBias bias;
  std::vector<double> probs;
  std::vector<double> logprobs;
  TokenId greedy = 0;
  std::vector<std::pair<TokenId, double>> top;
};

std::vector<ReferenceCase> reference_cases() {
  std::ifstream in(std::filesystem::path(BATON_TEST_DATA) / "sampler" / "logit_bias.json");
  const auto json = nlohmann::json::parse(in);
  std::vector<ReferenceCase> cases;
  for (const auto& c : json.at("cases")) {
    ReferenceCase r;
    r.name = c.at("name").get<std::string>();
    r.logits = c.at("logits").get<std::vector<float>>();
    r.probs = c.at("probs").get<std::vector<double>>();
    r.logprobs = c.at("logprobs").get<std::vector<double>>();
    r.greedy = c.at("greedy").get<TokenId>();
    for (const auto& [key, value] : c.at("bias").items()) {
      r.bias.push_back({static_cast<TokenId>(std::stoi(key)), value.get<float>()});
    }
    std::sort(r.bias.begin(), r.bias.end(),
              [](const LogitBiasEntry& a, const LogitBiasEntry& b) { return a.token < b.token; });
    for (const auto& t : c.at("top")) {
      r.top.emplace_back(t.at(0).get<TokenId>(), t.at(1).get<double>());
    }
    cases.push_back(std::move(r));
  }
  return cases;
}

// Log-probabilities agree to 2e-5, or 1e-6 of their size past -20 (f32 exponentials
// summed in f64 on baton's side, f64 throughout on numpy's; the result is an f32).
double logprob_tolerance(double expected) { return std::max(2e-5, 1e-6 * std::abs(expected)); }

TEST(LogitBias, GreedyPickAndLogprobsMatchNumpysBiasedSoftmax) {
  const std::vector<ReferenceCase> cases = reference_cases();
  ASSERT_EQ(cases.size(), 7u);
  for (const ReferenceCase& c : cases) {
    SCOPED_TRACE(c.name);
    Sampler greedy({.temperature = 0.0, .top_logprobs = 5, .logit_bias = c.bias});
    const SampledToken t = greedy.next(c.logits, {}, {});
    EXPECT_EQ(t.id, c.greedy);
    const double expected = c.logprobs[static_cast<std::size_t>(c.greedy)];
    EXPECT_NEAR(t.logprob, expected, logprob_tolerance(expected));
    ASSERT_EQ(t.top.size(), c.top.size());
    for (std::size_t i = 0; i < c.top.size(); ++i) {
      EXPECT_EQ(t.top[i].token, c.top[i].first) << "rank " << i;
      EXPECT_NEAR(t.top[i].logprob, c.top[i].second, logprob_tolerance(c.top[i].second))
          << "rank " << i;
    }
  }
}

TEST(LogitBias, SampledDrawsFollowTheBiasedDistributionAndReportItsLogprobs) {
  for (const ReferenceCase& c : reference_cases()) {
    if (c.logits.size() > 8) continue;  // the small rows: every token's count is checked
    SCOPED_TRACE(c.name);
    Sampler sampler({.temperature = 1.0, .seed = 11, .logit_bias = c.bias});
    const int n = 20000;
    std::vector<int> counts(c.logits.size(), 0);
    for (int i = 0; i < n; ++i) {
      const SampledToken t = sampler.next(c.logits, {}, {});
      ++counts[static_cast<std::size_t>(t.id)];
      const double expected = c.logprobs[static_cast<std::size_t>(t.id)];
      ASSERT_NEAR(t.logprob, expected, logprob_tolerance(expected));
    }
    for (std::size_t j = 0; j < counts.size(); ++j) {
      // Binomial(n, p): within 5 standard deviations, plus one for the rounding.
      const double p = c.probs[j];
      EXPECT_NEAR(counts[j], n * p, 5 * std::sqrt(n * p * (1 - p)) + 1) << "token " << j;
    }
  }
}

TEST(LogitBias, MinusOneHundredBansATokenOverManyDraws) {
  // A flat row: without the bias the banned tokens would be drawn a quarter of the time.
  const std::vector<float> logits{0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  for (const double temperature : {0.7, 1.0, 2.0}) {
    Sampler sampler({.temperature = temperature, .seed = 5, .logit_bias = {{1, -100}, {6, -100}}});
    for (int i = 0; i < 50000; ++i) {
      const TokenId t = sampler.next(logits, {}, {}).id;
      ASSERT_TRUE(t != 1 && t != 6) << "drew a banned token at temperature " << temperature;
    }
  }
}

TEST(LogitBias, PlusOneHundredForcesATokenOverManyDraws) {
  // Token 3 is the least likely by 10 nats; +100 makes it every draw, even at temperature 2.
  const std::vector<float> logits{5.0f, 4.0f, 3.0f, -5.0f, 2.0f};
  for (const double temperature : {0.0, 1.0, 2.0}) {
    Sampler sampler(
        {.temperature = temperature, .top_p = 0.9, .seed = 9, .logit_bias = {{3, 100}}});
    for (int i = 0; i < 50000; ++i) {
      ASSERT_EQ(sampler.next(logits, {}, {}).id, 3) << "temperature " << temperature;
    }
  }
}

TEST(LogitBias, ABiasedRequestIsNotPlainGreedy) {
  SamplingParams p{.temperature = 0.0};
  ASSERT_TRUE(is_plain_greedy(p));
  p.logit_bias = {{4, -1.0f}};
  EXPECT_FALSE(is_plain_greedy(p));  // the runner must hand over logits to bias
}

TEST(LogitBias, TheSamplerRefusesABiasOutsideItsLimits) {
  const auto refused = [](LogitBias bias) {
    EXPECT_THROW(Sampler({.logit_bias = std::move(bias)}), std::invalid_argument);
  };
  refused({{1, 100.5f}});
  refused({{1, -101.0f}});
  refused({{1, std::nanf("")}});
  refused({{-1, 1.0f}});
  refused({{5, 1.0f}, {2, 1.0f}});  // unsorted
  refused({{2, 1.0f}, {2, 1.0f}});  // repeated
  LogitBias many;
  for (TokenId t = 0; t < 301; ++t) many.push_back({t, 1.0f});
  refused(many);
  many.pop_back();
  EXPECT_NO_THROW(Sampler({.logit_bias = many}));
  // A token past the row (which the engine's check keeps from a sampler): never written.
  Sampler sampler({.temperature = 0.0, .logit_bias = {{9, 1.0f}}});
  const std::vector<float> logits{1.0f, 2.0f};
  EXPECT_THROW(sampler.next(logits, {}, {}), std::out_of_range);
  EXPECT_THROW(biased_logits(logits, {{2, 1.0f}}), std::out_of_range);
  EXPECT_EQ(biased_logits(logits, {{1, 1.0f}})[1], 3.0f);
}

}  // namespace
}  // namespace baton
