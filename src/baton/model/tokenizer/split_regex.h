// SplitRegex: a pre-tokenizer's pattern compiled with PCRE2 (UTF and Unicode properties,
// so \p{L} and \s mean what they mean to Hugging Face tokenizers), and the "isolated"
// split: every match becomes a piece, and so does every stretch between matches. Input
// that is not valid UTF-8 is matched around (PCRE2_MATCH_INVALID_UTF): invalid bytes end
// up in the stretches between matches, so nothing is lost.
// Thread-safety: split() is const and may run on several threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

class SplitRegex {
 public:
  // Throws std::invalid_argument with PCRE2's message and the offset for a bad pattern.
  explicit SplitRegex(std::string_view pattern);
  ~SplitRegex();
  SplitRegex(SplitRegex&&) noexcept;
  SplitRegex& operator=(SplitRegex&&) noexcept;

  // The pieces of `text`, in order; concatenated they are `text`.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace baton
