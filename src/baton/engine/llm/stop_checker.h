// StopChecker: decides, token by token, whether a generation is finished: an end token
// (unless ignored), a stop string in the decoded text, max_tokens, or the end of the
// context. Keeps the completion's text, cut before the first stop string.
// Thread-safety: belongs to one request.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/generation.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton {

// The length of `text` without a trailing UTF-8 sequence that is still incomplete (its
// lead byte promises more bytes than follow); the whole length otherwise.
std::size_t utf8_complete_prefix(std::string_view text);

class StopChecker {
 public:
  // `tokenizer` may be null (no text, and then no stop strings: std::invalid_argument).
  StopChecker(const BpeTokenizer* tokenizer, const GenerationParams& params,
              std::vector<TokenId> end_tokens, int context_left);

  // Called with each generated token; returns why generation ends after it, if it does.
  std::optional<FinishReason> add(TokenId token);
  // The text so far (up to the stop string once one is seen).
  const std::string& text() const { return text_; }
  // The stop string that ended the generation, once one did.
  const std::optional<std::string>& matched_stop() const { return matched_stop_; }
  // The text not taken before that can no longer change: not a trailing character still
  // being spelled (an incomplete UTF-8 sequence, or U+FFFD), nor a tail that may still
  // become a stop string.
  // With `finished`, all the rest.
  std::string take_stable_text(bool finished);

 private:
  const BpeTokenizer* tokenizer_;
  GenerationParams params_;
  std::vector<TokenId> end_tokens_;
  int context_left_;
  std::vector<TokenId> text_tokens_;  // generated, end tokens left out
  std::string text_;
  std::optional<std::string> matched_stop_;
  std::size_t taken_ = 0;  // bytes of text_ handed out by take_stable_text
  int generated_ = 0;
};

}  // namespace baton
