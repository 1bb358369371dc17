// The ModelConfig of a GGUF file, from llama.cpp's metadata: general.architecture (llama,
// qwen2, qwen3; Mistral's files say llama) and ARCH.block_count, .embedding_length,
// .feed_forward_length, .attention.head_count(_kv), .attention.key_length,
// .attention.layer_norm_rms_epsilon, .context_length, .rope.freq_base,
// .rope.scaling.type/.factor (linear); Llama 3's scaling comes as the rope_freqs tensor
// (one divisor per frequency). Bias and q/k norms follow from the tensors present, tied
// embeddings from a missing output.weight, the vocabulary size from the token list (or the
// embedding), BOS and the end tokens (eos, eot, eom) from tokenizer.ggml.*. The values go
// through the same checks as a config.json's (model_config.h), and before that: sizes and
// .context_length are positive integers that fit an int, .rope.freq_base, the epsilon and
// the scaling factor positive finite numbers, .rope.dimension_count (when given) the whole
// head.
// Throws ModelFileError naming the file and the key.
// Thread-safety: a pure function.
#pragma once

#include <filesystem>
#include <string>

#include "baton/model/config/model_config.h"
#include "baton/model/files/gguf_file.h"
#include "baton/model/files/gguf_tensors.h"

namespace baton {

ModelConfig gguf_model_config(const GgufHeader& header, const TensorView* rope_freqs,
                              const std::string& file);

// The config of an open GGUF file (its header, and its rope_freqs tensor when it has one).
ModelConfig gguf_model_config(const GgufFile& file);

}  // namespace baton
