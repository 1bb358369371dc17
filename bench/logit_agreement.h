// How far a model's logits move from a reference's on the same tokens, for the benches
// that compare weight formats (q8_accuracy on the CPU, cuda_llm_bench's fp8 on the GPU):
// the reference's greedy tokens are fed to both (teacher forcing), and over those
// positions:
//   - top-1 agreement: the fraction where the model's argmax is the reference's token;
//   - mean log-prob gap: mean of log p_ref(token) - log p_model(token), in nats.
// Also the fixed prompt both benches start from. Header-only; pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton::bench {

// The prompt: a fixed sentence where the model has a tokenizer, else fixed token ids.
inline std::vector<TokenId> prompt_for(const std::filesystem::path& dir, std::int64_t vocab) {
  if (std::filesystem::exists(dir / "tokenizer.json")) {
    const auto tokenizer = BpeTokenizer::from_directory(dir);
    return tokenizer.encode("Once upon a time, in a small village by the sea, there lived");
  }
  std::vector<TokenId> t;
  for (int i = 0; i < 16; ++i) t.push_back(static_cast<TokenId>((i * 7919 + 13) % vocab));
  return t;
}

// log softmax(logits)[token] and the argmax.
struct Scored {
  TokenId best = 0;
  double log_p = 0.0;  // of the token asked for
};

inline Scored score(const float* logits, std::size_t vocab, TokenId token) {
  const float* best = std::max_element(logits, logits + vocab);
  double sum = 0.0;
  for (std::size_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - *best));
  return {.best = static_cast<TokenId>(best - logits),
          .log_p = static_cast<double>(logits[token] - *best) - std::log(sum)};
}

struct Agreement {
  double top1 = 0.0;  // fraction
  double gap = 0.0;   // nats, mean
};

// `logits` and `reference` [greedy.size() x vocab]: row i scores greedy[i], the
// reference's own pick there.
inline Agreement agreement(const std::vector<float>& reference, const std::vector<float>& logits,
                           const std::vector<TokenId>& greedy, std::size_t vocab) {
  Agreement a;
  const auto count = static_cast<double>(greedy.size());
  for (std::size_t i = 0; i < greedy.size(); ++i) {
    const Scored r = score(reference.data() + i * vocab, vocab, greedy[i]);
    const Scored m = score(logits.data() + i * vocab, vocab, greedy[i]);
    a.top1 += m.best == greedy[i] ? 1.0 / count : 0.0;
    a.gap += (r.log_p - m.log_p) / count;
  }
  return a;
}

// How many leading tokens of `own` equal `greedy`'s.
inline std::ptrdiff_t common_prefix(const std::vector<TokenId>& greedy,
                                    const std::vector<TokenId>& own) {
  const std::size_t n = std::min(greedy.size(), own.size());
  return std::mismatch(greedy.begin(), greedy.begin() + static_cast<std::ptrdiff_t>(n), own.begin())
             .first -
         greedy.begin();
}

}  // namespace baton::bench
