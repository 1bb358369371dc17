// TokenDecoder: the `decoder` of a tokenizer.json, which turns the vocabulary strings of
// a list of tokens back into text: Replace of a literal ("▁" by " "), ByteFallback
// ("<0xNN>" tokens to their bytes), Fuse, Strip, Metaspace, ByteLevel and a Sequence of
// those, applied in order as the tokenizers library does. Bytes stay raw (a character
// whose bytes are split over tokens is completed by the next call, not replaced by U+FFFD).
// A text that continues earlier text keeps its first space: the start-of-text strips of
// Strip and Metaspace apply only to a whole text. Other decoders are a ModelFileError.
// Thread-safety: an immutable value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/tokenizer/metaspace.h"

namespace baton {

class TokenDecoder {
 public:
  // `node` is tokenizer.json's decoder (null: the tokens are joined); `file` names it.
  static TokenDecoder read(const nlohmann::json& node, std::string_view file);

  std::string decode(std::vector<std::string> tokens, bool continuation) const;

 private:
  struct Step {
    enum class Kind { replace, byte_fallback, fuse, strip, metaspace, byte_level } kind;
    std::string from, to;  // replace
    std::string content;   // strip: the character taken off
    int start = 0, stop = 0;
    Metaspace metaspace;
  };
  void add(const nlohmann::json& node, std::string_view file);

  std::vector<Step> steps_;
};

}  // namespace baton
