// Sampler: picks the next token from a row of logits, as OpenAI-style APIs describe it:
// repetition penalty on tokens already in the context (a positive logit divided by the
// penalty, a negative one multiplied), then temperature (0: greedy), top-k, top-p
// (nucleus) and min-p filtering, then a draw from a seeded generator. The log-probability
// reported is that of the chosen token under the model's own distribution (the raw logits).
// Thread-safety: a Sampler belongs to one request; it holds the request's random state.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>

#include "baton/model/token_id.h"

namespace baton {

struct SamplingParams {
  double temperature = 1.0;  // 0: greedy
  int top_k = 0;             // 0: no limit
  double top_p = 1.0;        // (0, 1]
  double min_p = 0.0;        // [0, 1]: drop tokens below min_p times the top probability
  double repetition_penalty = 1.0;
  std::optional<std::uint64_t> seed;  // none: from std::random_device
};

struct SampledToken {
  TokenId id = 0;
  float logprob = 0.0f;
};

class Sampler {
 public:
  // Throws std::invalid_argument naming the parameter that is out of range.
  explicit Sampler(const SamplingParams& params);
  SampledToken next(std::span<const float> logits, std::span<const TokenId> context);

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

}  // namespace baton
