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
}

// log softmax(logits)[id], computed stably.
float log_probability(std::span<const float> logits, TokenId id) {
  const float best = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (float l : logits) total += std::exp(static_cast<double>(l - best));
  return static_cast<float>(logits[id] - best - std::log(total));
}

}  // namespace

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed ? *params.seed : std::random_device{}()) {
  check(params_);
}

SampledToken Sampler::next(std::span<const float> logits, std::span<const TokenId> context) {
  if (logits.empty()) throw std::invalid_argument("no logits to sample from");
  std::vector<float> scores(logits.begin(), logits.end());
  if (params_.repetition_penalty != 1.0) {
    const auto penalty = static_cast<float>(params_.repetition_penalty);
    std::vector<bool> seen(scores.size(), false);
    for (TokenId t : context) {
      if (t < 0 || static_cast<std::size_t>(t) >= scores.size() || seen[t]) continue;
      seen[t] = true;
      scores[t] = scores[t] > 0 ? scores[t] / penalty : scores[t] * penalty;
    }
  }
  auto chosen =
      static_cast<TokenId>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  if (params_.temperature > 0.0) {
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
    chosen = order[pick(rng_)];
  }
  return {chosen, log_probability(logits, chosen)};
}

}  // namespace baton
