#include "baton/model/output/sampler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "baton/model/cpu/kernels/simd_kernels.h"

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
  check_logit_bias(p.logit_bias);
}

// The largest logit (NaN ignored; -infinity when there is none), in eight independent
// lanes: std::max_element's one chain of compares took 0.3 ms over a 152K vocabulary.
float largest(std::span<const float> x) {
  constexpr std::size_t kLanes = 8;
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  std::array<float, kLanes> lane;
  lane.fill(kNone);
  std::size_t i = 0;
  for (; i + kLanes <= x.size(); i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  float m = kNone;
  for (; i < x.size(); ++i) m = x[i] > m ? x[i] : m;
  for (const float l : lane) m = l > m ? l : m;
  return m;
}

// The most likely token: the lowest id among the largest logits (0 when every one is NaN).
TokenId first_largest(std::span<const float> x) {
  const auto at = std::find(x.begin(), x.end(), largest(x));
  return at == x.end() ? 0 : static_cast<TokenId>(at - x.begin());
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

// log sum exp(logits), computed stably: log softmax(logits)[i] = logits[i] - this. The
// terms are the kernel set's vector f32 exponentials summed in f64: every token pays this
// over a 150K vocabulary (with std::exp a greedy token took 1.7 ms in sampler_bench, now 0.74).
double log_normalizer(std::span<const float> logits, float best) {
  return best + std::log(simd_kernels().sum_exp(logits.data(), logits.size(), best));
}
double log_normalizer(std::span<const float> logits) {
  return log_normalizer(logits, largest(logits));
}

// The `count` most likely tokens under the (biased) logits, most likely first (ties: lower
// id), in one pass: a token is compared with the least likely of those kept so far.
std::vector<TopLogprob> top_logprobs(std::span<const float> logits, int count, double norm) {
  const auto n = std::min(static_cast<std::size_t>(count), logits.size());
  if (n == 0) return {};
  std::vector<TokenId> kept;
  kept.reserve(n + 1);
  // Below this, a token cannot enter: the least likely kept once n are (else any number).
  float floor = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (!(v > floor) && (kept.size() == n || std::isnan(v))) continue;
    const auto at = std::upper_bound(kept.begin(), kept.end(), v,
                                     [&](float value, TokenId k) { return value > logits[k]; });
    kept.insert(at, static_cast<TokenId>(i));
    if (kept.size() > n) kept.pop_back();
    if (kept.size() == n) floor = logits[kept.back()];
  }
  std::vector<TopLogprob> top;
  for (const TokenId t : kept)
    top.push_back({.token = t, .logprob = static_cast<float>(logits[t] - norm)});
  return top;
}

}  // namespace

GreedyToken greedy_token(std::span<const float> logits) {
  if (logits.empty()) throw std::invalid_argument("no logits to sample from");
  // One pass for the first most likely token and whether every logit is finite.
  std::size_t best = 0;
  bool finite = true;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    finite = finite && std::isfinite(logits[i]);
    if (logits[i] > logits[best]) best = i;
  }
  const float top = logits[best];
  return {.token = static_cast<TokenId>(best),
          .logprob = static_cast<float>(top - log_normalizer(logits, top)),
          .finite = finite};
}

bool is_plain_greedy(const SamplingParams& p) {
  return p.temperature == 0.0 && p.repetition_penalty == 1.0 && p.presence_penalty == 0.0 &&
         p.frequency_penalty == 0.0 && p.top_logprobs == 0 && p.logit_bias.empty();
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed ? *params.seed : std::random_device{}()) {
  check(params_);
}

SampledToken Sampler::next(std::span<const float> model_logits, std::span<const TokenId> context,
                           std::span<const TokenId> generated) {
  if (model_logits.empty()) throw std::invalid_argument("no logits to sample from");
  // OpenAI adds logit_bias to the model's logits before sampling and reports log-probs of
  // the biased distribution, so from here on the biased row stands for the model's.
  std::vector<float> biased;
  std::span<const float> logits = model_logits;
  if (!params_.logit_bias.empty()) {
    biased = biased_logits(model_logits, params_.logit_bias);
    logits = biased;
  }
  const double norm = log_normalizer(logits);
  const bool penalized = params_.repetition_penalty != 1.0 || params_.presence_penalty != 0.0 ||
                         params_.frequency_penalty != 0.0;
  TokenId chosen = 0;
  if (!penalized) {
    // The logits as they are: no copy of the vocabulary.
    chosen = params_.temperature > 0.0 ? draw(logits) : first_largest(logits);
  } else {
    std::vector<float> scores(logits.begin(), logits.end());
    if (params_.repetition_penalty != 1.0) {
      apply_repetition_penalty(scores, context, params_.repetition_penalty);
    }
    if (params_.presence_penalty != 0.0 || params_.frequency_penalty != 0.0) {
      apply_openai_penalties(scores, generated, params_.presence_penalty,
                             params_.frequency_penalty);
    }
    chosen = params_.temperature > 0.0 ? draw(scores) : first_largest(scores);
  }
  SampledToken out{.id = chosen, .logprob = static_cast<float>(logits[chosen] - norm), .top = {}};
  if (params_.top_logprobs > 0) out.top = top_logprobs(logits, params_.top_logprobs, norm);
  return out;
}

// The candidates are those a sort of the whole vocabulary by score would give (cut by
// top-k, then min-p, then the top-p nucleus), found in O(vocabulary): top-k by selection,
// min-p by a filter, and for top-p only as long a sorted prefix as the nucleus needs. Each
// weight (the probability at the temperature, relative to the best token's 1) is one f32
// exponential, computed once.
TokenId Sampler::draw(std::span<const float> scores) {
  struct Candidate {
    float weight;
    TokenId id;
  };
  const float best = largest(scores);
  const auto inverse_t = static_cast<float>(1.0 / params_.temperature);
  std::vector<Candidate> candidates(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    candidates[i] = {std::exp((scores[i] - best) * inverse_t), static_cast<TokenId>(i)};
  }
  const auto by_score = [&](const Candidate& a, const Candidate& b) {
    return scores[a.id] > scores[b.id];
  };
  if (params_.top_k > 0 && static_cast<std::size_t>(params_.top_k) < candidates.size()) {
    const auto k = static_cast<std::ptrdiff_t>(params_.top_k);
    std::nth_element(candidates.begin(), candidates.begin() + k - 1, candidates.end(), by_score);
    candidates.resize(static_cast<std::size_t>(k));
  }
  double total = 0.0;  // over the top-k candidates, before min-p (the nucleus is of this)
  for (const Candidate& c : candidates) total += c.weight;
  if (params_.min_p > 0.0) {
    std::erase_if(candidates, [&](const Candidate& c) { return c.weight < params_.min_p; });
  }
  if (params_.top_p < 1.0) {
    std::size_t sorted = 0;
    std::size_t keep = 0;
    double mass = 0.0;
    while (keep < candidates.size() && (keep == 0 || mass < params_.top_p * total)) {
      if (keep == sorted) {  // sort the next stretch of the remaining candidates
        const std::size_t next = std::min(candidates.size(), std::max<std::size_t>(64, 2 * sorted));
        std::partial_sort(candidates.begin() + static_cast<std::ptrdiff_t>(sorted),
                          candidates.begin() + static_cast<std::ptrdiff_t>(next), candidates.end(),
                          by_score);
        sorted = next;
      }
      mass += candidates[keep++].weight;
    }
    candidates.resize(keep);
  }
  double kept = 0.0;
  for (const Candidate& c : candidates) kept += c.weight;
  const double u = std::uniform_real_distribution<double>(0.0, kept)(rng_);
  double running = 0.0;
  for (const Candidate& c : candidates) {
    running += c.weight;
    if (u < running) return c.id;
  }
  return candidates.back().id;  // u within rounding of the sum
}

}  // namespace baton
