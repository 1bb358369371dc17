// The tokenizer of a GGUF file as the tokenizer.json BpeTokenizer reads. llama.cpp's
// "gpt2" tokenizer model: byte-level BPE (tokenizer.ggml.tokens, .merges, .token_type,
// .pre naming the split regex: "gpt-2"/"default", "llama-bpe"/"llama3" (merges ignored for
// whole-word tokens, as in Llama 3's tokenizer.json), "qwen2"/"deepseek-r1-qwen"). Its
// "llama" model: SentencePiece BPE (scores instead of merges: Llama 2, Mistral, TinyLlama,
// Gemma), as the legacy tokenizer.json of the same model (" " -> "▁", a leading "▁" unless
// tokenizer.ggml.add_space_prefix is false, byte fallback). Control tokens become special
// added tokens and user-defined ones plain added tokens; BOS is put first when
// tokenizer.ggml.add_bos_token says so. Other tokenizer models (Unigram "t5", WordPiece
// "bert", RWKV) are refused, naming the model. Throws ModelFileError naming the file and key.
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "baton/model/files/gguf_file.h"

namespace baton {

nlohmann::json gguf_tokenizer_json(const GgufHeader& header, const std::string& file);

// What tokenizer_config.json would say: bos_token, eos_token, unk_token and pad_token (the
// texts of tokenizer.ggml.*_token_id) and chat_template (tokenizer.chat_template).
nlohmann::json gguf_tokenizer_config(const GgufHeader& header);

}  // namespace baton
