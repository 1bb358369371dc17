// The pre-tokenizer regexes of the byte-level BPE families: GPT-2's (what ByteLevel applies
// with use_regex), and the Split patterns of Llama 3 and Qwen2 (they differ only in how
// many digits one piece takes). llama.cpp names them "gpt-2", "llama-bpe" and "qwen2" in
// a GGUF file's tokenizer.ggml.pre.
// Thread-safety: constants.
#pragma once

#include <string_view>

namespace baton {

inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace baton
