// Sampler: picks the next token from a row of logits, as OpenAI-style APIs describe it:
// OpenAI's logit_bias added to the logits first (logit_bias.h), then repetition penalty
// on tokens already in the context (a positive logit divided by the penalty, a negative
// one multiplied), then OpenAI's frequency and presence penalties on the tokens generated
// so far (logit -= count * frequency + (count > 0) * presence; the prompt does not count,
// as in vLLM), then temperature (0: greedy), top-k, top-p (nucleus) and min-p filtering,
// then a draw from a seeded generator. The log-probability reported is that of the chosen
// token under the model's own distribution with logit_bias added (what OpenAI reports; no
// penalty, temperature or filter), and so are the top_logprobs most likely tokens
// reported beside it.
// Thread-safety: a Sampler belongs to one request; it holds the request's random state.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "baton/model/output/logit_bias.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy
  int top_k = 0;             // 0: no limit
  double top_p = 1.0;        // (0, 1]
  double min_p = 0.0;        // [0, 1]: drop tokens below min_p times the top probability
  double repetition_penalty = 1.0;
  double presence_penalty = 0.0;      // [-2, 2]
  double frequency_penalty = 0.0;     // [-2, 2]
  int top_logprobs = 0;               // [0, 20]: most likely tokens reported with each token
  std::optional<std::uint64_t> seed;  // none: from std::random_device
  LogitBias logit_bias;               // added to the logits before all else
};

struct TopLogprob {
  TokenId token = 0;
  float logprob = 0.0f;
};

struct SampledToken {
  TokenId id = 0;
  float logprob = 0.0f;
  std::vector<TopLogprob> top;  // top_logprobs of them, most likely first
};

// The most likely token of a row of logits (the lowest id among ties) and its
// log-probability: what a plain greedy Sampler picks. `finite` is false when some logit is
// NaN or infinite (the pick means nothing then).
struct GreedyToken {
  TokenId token = 0;
  float logprob = 0.0f;
  bool finite = true;
};
GreedyToken greedy_token(std::span<const float> logits);
// True when `params` pick the most likely token and report nothing more: temperature 0,
// no penalties, no logit_bias, no top_logprobs (so greedy_token() of the raw logits is
// what the Sampler would do).
bool is_plain_greedy(const SamplingParams& params);

class Sampler {
 public:
  // Throws std::invalid_argument naming the parameter that is out of range.
  explicit Sampler(const SamplingParams& params);
  // `context` is every token so far (prompt and generated: the repetition penalty),
  // `generated` the generated ones only (the frequency and presence penalties). Throws
  // std::invalid_argument when a logit_bias token is outside `logits`.
  SampledToken next(std::span<const float> logits, std::span<const TokenId> context,
                    std::span<const TokenId> generated);

 private:
  // A draw from the filtered distribution of `scores` at the temperature (> 0).
  TokenId draw(std::span<const float> scores);

  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace baton
