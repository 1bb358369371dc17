// PostProcessor: the special tokens a tokenizer.json's `post_processor` puts around one
// encoded text, which transformers adds with add_special_tokens=True (as sentence-
// transformers encodes an embedding model's inputs): TemplateProcessing's "single"
// template (Llama's BOS; the EOS Qwen3-Embedding appends before last-token pooling),
// RobertaProcessing's and BertProcessing's cls and sep, and a Sequence of those. ByteLevel
// changes only offsets, so it adds nothing. Other types are a ModelFileError.
// Thread-safety: an immutable value.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct PostProcessor {
  std::vector<TokenId> before;  // ids put before the text's
  std::vector<TokenId> after;   // and after them

  std::vector<TokenId> apply(std::vector<TokenId> ids) const;
};

// `node` is tokenizer.json's post_processor (null: none); `file` names it in errors.
PostProcessor read_post_processor(const nlohmann::json& node, std::string_view file);

}  // namespace baton
