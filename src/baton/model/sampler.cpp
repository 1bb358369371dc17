#include "baton/model/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace baton {
namespace {

void check(const SamplingParams& p) {
  if (!(p.temperature >= 0.0) || !std::isfinite(p.temperature)) {
    throw std::invalid_argument("temperature must be >= 0");
  }
  if (p.top_k < 0) throw std::invalid_argument("top_k must be >= 0");
  if (!(p.top_p > 0.0 && p.top_p <= 1.0)) throw std::invalid_argument("top_p must be in (0, 1]");
  if (!(p.min_p >= 0.0 && p.min_p <= 1.0)) throw std::invalid_argument("min_p must be in [0, 1]");
  if (!(p.repetition_penalty > 0.0) || !std::isfinite(p.repetition_penalty)) {
    throw std::invalid_argument("repetition_penalty must be > 0");
  }
  if (!(p.presence_penalty >= -2.0 && p.presence_penalty <= 2.0)) {
    throw std::invalid_argument("presence_penalty must be in [-2, 2]");
  }
  if (!(p.frequency_penalty >= -2.0 && p.frequency_penalty <= 2.0)) {
    throw std::invalid_argument("frequency_penalty must be in [-2, 2]");
  }
  if (p.top_logprobs < 0 || p.top_logprobs > 20) {
    throw std::invalid_argument("top_logprobs must be in [0, 20]");
  }
}

bool in_vocab(TokenId t, std::size_t vocab) {
  return t >= 0 && static_cast<std::size_t>(t) < vocab;
}

// Each token seen in the context once: a positive score divided, a negative multiplied.
void apply_repetition_penalty(std::vector<float>& scores, std::span<const TokenId> context,
                              double penalty_value) {
  const auto penalty = static_cast<float>(penalty_value);
  std::vector<bool> seen(scores.size(), false);
  for (TokenId t : context) {
    if (!in_vocab(t, scores.size()) || seen[t]) continue;
    seen[t] = true;
    scores[t] = scores[t] > 0 ? scores[t] / penalty : scores[t] * penalty;
  }
}

// OpenAI's: logit[j] -= count[j] * frequency + (count[j] > 0) * presence.
void apply_openai_penalties(std::vector<float>& scores, std::span<const TokenId> generated,
                            double presence, double frequency) {
  std::vector<int> count(scores.size(), 0);
  for (TokenId t : generated) {
    if (in_vocab(t, scores.size())) ++count[t];
  }
  for (std::size_t j = 0; j < scores.size(); ++j) {
    if (count[j] == 0) continue;
    scores[j] -= static_cast<float>(count[j] * frequency + presence);
  }
}

// log sum exp(logits), computed stably: log softmax(logits)[i] = logits[i] - this.
double log_normalizer(std::span<const float> logits) {
  const float best = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (float l : logits) total += std::exp(static_cast<double>(l - best));
  return best + std::log(total);
}

// The `count` most likely tokens under the raw logits, most likely first (ties: lower id).
std::vector<TopLogprob> top_logprobs(std::span<const float> logits, int count, double norm) {
  const auto n = std::min(static_cast<std::size_t>(count), logits.size());
  std::vector<TokenId> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](TokenId a, TokenId b) {
                      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
                    });
  std::vector<TopLogprob> top;
  for (std::size_t i = 0; i < n; ++i) {
    top.push_back({order[i], static_cast<float>(logits[order[i]] - norm)});
  }
  return top;
}

}  // namespace

GreedyToken greedy_token(std::span<const float> logits) {
  if (logits.empty()) throw std::invalid_argument("no logits to sample from");
  const bool finite =
      std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); });
  const auto best = std::max_element(logits.begin(), logits.end());
  const auto token = static_cast<TokenId>(best - logits.begin());
  return {token, static_cast<float>(*best - log_normalizer(logits)), finite};
}

bool is_plain_greedy(const SamplingParams& p) {
  return p.temperature == 0.0 && p.repetition_penalty == 1.0 && p.presence_penalty == 0.0 &&
         p.frequency_penalty == 0.0 && p.top_logprobs == 0;
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed ? *params.seed : std::random_device{}()) {
  check(params_);
}

SampledToken Sampler::next(std::span<const float> logits, std::span<const TokenId> context,
                           std::span<const TokenId> generated) {
  if (logits.empty()) throw std::invalid_argument("no logits to sample from");
  std::vector<float> scores(logits.begin(), logits.end());
  if (params_.repetition_penalty != 1.0) {
    apply_repetition_penalty(scores, context, params_.repetition_penalty);
  }
  if (params_.presence_penalty != 0.0 || params_.frequency_penalty != 0.0) {
    apply_openai_penalties(scores, generated, params_.presence_penalty, params_.frequency_penalty);
  }
  const TokenId chosen =
      params_.temperature > 0.0
          ? draw(scores)
          : static_cast<TokenId>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  const double norm = log_normalizer(logits);
  SampledToken out{chosen, static_cast<float>(logits[chosen] - norm), {}};
  if (params_.top_logprobs > 0) out.top = top_logprobs(logits, params_.top_logprobs, norm);
  return out;
}

TokenId Sampler::draw(const std::vector<float>& scores) {
  // Candidates by score, highest first; probabilities at the temperature.
  std::vector<TokenId> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](TokenId a, TokenId b) { return scores[a] > scores[b]; });
  if (params_.top_k > 0 && static_cast<std::size_t>(params_.top_k) < order.size()) {
    order.resize(static_cast<std::size_t>(params_.top_k));
  }
  std::vector<double> probs(order.size());
  double total = 0.0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    total += probs[i] = std::exp((scores[order[i]] - scores[order[0]]) / params_.temperature);
  }
  std::size_t keep = 0;
  double mass = 0.0;
  while (keep < order.size() && (keep == 0 || mass < params_.top_p * total) &&
         probs[keep] >= params_.min_p * probs[0]) {
    mass += probs[keep++];
  }
  std::discrete_distribution<std::size_t> pick(probs.begin(),
                                               probs.begin() + static_cast<std::ptrdiff_t>(keep));
  return order[pick(rng_)];
}

}  // namespace baton
