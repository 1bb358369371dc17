// The tokenizer files of a made-up model (`baton make-model`): a byte-level BPE
// `tokenizer.json` whose merges are learned, deterministically, from a short English text
// kept in the .cpp, with the special tokens of the family's chat format after the
// vocabulary; and a `tokenizer_config.json` with bos/eos and a minimal chat template of
// that family (ChatML for qwen2/qwen3, Llama 3 headers for llama). baton's BpeTokenizer
// and Hugging Face `tokenizers` both load the tokenizer.json.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "baton/model/config/model_config.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct MadeTokenizer {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::int64_t size = 0;                    // ids 0 .. size-1: 256 bytes, merges, special tokens
  std::int64_t merge_count = 0;             // learned merges
  std::optional<TokenId> bos_id;            // the token config.json names as bos_token_id
  std::vector<TokenId> eos_ids;             // the end of a turn first, then the end of text
  std::vector<TokenId> special_ids;         // every added token, in id order
  std::vector<std::string> special_tokens;  // their text, in the same order
};

// The same files for the same arch, byte for byte. Throws std::invalid_argument for an arch
// without a chat format here (mistral).
MadeTokenizer make_tokenizer(ModelArch arch);

}  // namespace baton
