// The byte-level BPE tokenizer of tests/data/tokenizers/llama3_style, read once per test
// binary: the tokenizer the server and stop-checker tests turn ids into text with.
// Thread-safety: a function-local static, initialised once.
#pragma once

#include <filesystem>

#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton::testing {

inline const BpeTokenizer& llama3_tokenizer() {
  static const BpeTokenizer t = BpeTokenizer::from_directory(
      std::filesystem::path(BATON_TEST_DATA) / "tokenizers" / "llama3_style");
  return t;
}

}  // namespace baton::testing
