// Metaspace: SentencePiece's way with spaces as a tokenizer.json pre-tokenizer and
// decoder. Encoding writes each space as the replacement ("▁"), puts one before the text
// as the prepend scheme says (always; first: only before the stretch that opens the text;
// never) and, when `split`, cuts the text before each replacement. Decoding turns the
// replacement back into spaces and drops the space that was put before the first token.
// Read from {"type": "Metaspace", "replacement", "prepend_scheme", "split"} and from the
// older form with "add_prefix_space".
// Thread-safety: an immutable value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

struct Metaspace {
  enum class Prepend { always, first, never };

  std::string replacement = "\u2581";
  Prepend prepend = Prepend::always;
  bool split = true;

  // `node` is the pre-tokenizer's or decoder's object; `file` names it in errors.
  static Metaspace read(const nlohmann::json& node, std::string_view file);

  // The pieces of `text`; `opens_text`: the stretch starts the whole input (not after an
  // added token).
  std::vector<std::string> pre_tokenize(std::string_view text, bool opens_text) const;
  // One decoded token; `first`: the first of the text (its prepended space goes).
  std::string decode(std::string_view token, bool first) const;
};

}  // namespace baton
