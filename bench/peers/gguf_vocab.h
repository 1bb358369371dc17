// The tokenizer metadata of bench/peers/gguf_writer.cpp. A byte-level BPE tokenizer.json
// (GPT-2, Llama 3, Qwen2 style; what baton's BpeTokenizer reads) as llama.cpp's "gpt2"
// tokenizer model: one token string per id, their types, the merges as "left right", and
// the pre-tokenizer's name in llama.cpp ("qwen2", "llama-bpe", "gpt-2", else "default").
// A SentencePiece BPE tokenizer.json (byte_fallback, a Prepend("▁") normalizer: Llama 2's
// layout) as its "llama" model: tokens, types and scores, a token's score minus the rank
// of the first merge that makes it (SentencePiece's own scores fall with the merge order).
// The list is padded to the model's vocab_size with unused "[PAD<id>]" tokens (real models
// have more embedding rows than tokens). A directory without tokenizer.json (the test
// models) gets the 256 byte-level symbols and no merges, so any text still tokenizes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "baton/model/config/model_config.h"
#include "gguf_file.h"

namespace baton::peers {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class TokenType : std::int32_t {
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6
};

struct GgufVocab {
  std::string model = "gpt2";  // tokenizer.ggml.model: "gpt2" or "llama"
  std::vector<std::string> tokens;
  std::vector<float> scores;  // "llama" only
  std::vector<std::int32_t> types;  // TokenType values
  std::vector<std::string> merges;
  std::string pre;
  std::string chat_template;  // tokenizer_config.json's or chat_template.jinja; "" if none
  bool from_tokenizer_json = false;
};

// Reads `directory`/tokenizer.json (and the chat template beside it) for a model of `config`. Throws ModelFileError for a
// tokenizer that is not BPE or has more tokens than config.vocab_size.
GgufVocab read_vocab(const std::filesystem::path& directory, const ModelConfig& config);

// Adds the tokenizer.ggml.* keys of `vocab` (and bos/eos from `config`) to `file`.
void add_vocab(GgufFile& file, const GgufVocab& vocab, const ModelConfig& config);

}  // namespace baton::peers
