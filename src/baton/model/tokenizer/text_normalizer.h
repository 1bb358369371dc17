// TextNormalizer: the `normalizer` of a tokenizer.json, applied to each stretch of text
// between added tokens before it is split and encoded. The steps SentencePiece-style
// tokenizers publish: Prepend (Llama 2's "▁" before the text), Replace of a literal
// string (" " by "▁"), NFC (taken as a no-op: it leaves composed text, nearly all text,
// unchanged) and a Sequence of those. Other normalizers are a ModelFileError naming them.
// Thread-safety: an immutable value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

class TextNormalizer {
 public:
  // `node` is tokenizer.json's normalizer (null: none); `file` names it in errors.
  static TextNormalizer read(const nlohmann::json& node, std::string_view file);

  std::string apply(std::string_view text) const;
  bool empty() const { return steps_.empty(); }

 private:
  struct Step {
    enum class Kind { prepend, replace } kind;
    std::string from;  // replace: the literal to find
    std::string to;    // prepend: the text put before; replace: the replacement
  };
  void add(const nlohmann::json& node, std::string_view file);

  std::vector<Step> steps_;
};

}  // namespace baton
