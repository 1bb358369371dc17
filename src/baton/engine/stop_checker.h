// StopChecker: decides, token by token, whether a generation is finished: an end token
// (unless ignored), a stop string in the decoded text, max_tokens, or the end of the
// context. Keeps the completion's text, cut before the first stop string.
// Thread-safety: belongs to one request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baton/engine/generation.h"
#include "baton/model/bpe_tokenizer.h"

namespace baton {

class StopChecker {
 public:
  // `tokenizer` may be null (no text, and then no stop strings: std::invalid_argument).
  StopChecker(const BpeTokenizer* tokenizer, const GenerationParams& params,
              std::vector<TokenId> end_tokens, int context_left);

  // Called with each generated token; returns why generation ends after it, if it does.
  std::optional<FinishReason> add(TokenId token);
  // The text so far (up to the stop string once one is seen).
  const std::string& text() const { return text_; }

 private:
  const BpeTokenizer* tokenizer_;
  GenerationParams params_;
  std::vector<TokenId> end_tokens_;
  int context_left_;
  std::vector<TokenId> text_tokens_;  // generated, end tokens left out
  std::string text_;
  int generated_ = 0;
};

}  // namespace baton
