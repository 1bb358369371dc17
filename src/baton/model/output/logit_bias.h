// LogitBias: OpenAI's logit_bias, a number added to the logit of chosen tokens before
// anything else the sampler does, so that -100 all but bans a token and +100 all but
// forces it. Its limits are the API's: at most 300 entries, each bias in [-100, 100].
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct LogitBiasEntry {
  TokenId token = 0;
  float bias = 0.0f;
};

// Entries by ascending token id, each token at most once.
using LogitBias = std::vector<LogitBiasEntry>;

// OpenAI's service refuses larger maps (its reference states only the value range).
inline constexpr std::size_t kMaxLogitBiasEntries = 300;
inline constexpr double kMaxLogitBias = 100.0;  // and -kMaxLogitBias at the low end

// Throws std::invalid_argument naming the entry: too many entries, a negative or repeated
// token id, a bias that is not finite or outside [-100, 100]. The vocabulary is the
// engine's check, once the model is known (LlmBatch::validate: TokenOutsideVocabulary).
void check_logit_bias(const LogitBias& bias);

// `logits` with each entry's bias added (in f32, as the logits are). A token past the row
// is std::out_of_range: a guard of the row's memory, which a validated request never
// meets.
std::vector<float> biased_logits(std::span<const float> logits, const LogitBias& bias);

}  // namespace baton
