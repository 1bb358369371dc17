// Pooling: how an embedding model turns the last hidden states of an input into one
// vector. Read from a sentence-transformers export when the model directory has one
// (modules.json naming a Pooling module, its config.json with the pooling_mode_* flags,
// and a Normalize module or not), else the decoder-embedding default: the last token,
// L2-normalised (Qwen3-Embedding, e5-mistral).
// Thread-safety: values and pure functions.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>
#include "baton/model/files/model_source.h"

namespace baton {

enum class PoolingMode { mean, last_token, cls };

struct Pooling {
  PoolingMode mode = PoolingMode::last_token;
  bool normalize = true;
  bool from_sentence_transformers = false;  // false: the default above
};

std::string_view to_string(PoolingMode mode);
// "mean", "last" (or "lasttoken") and "cls"; throws std::invalid_argument for others.
PoolingMode parse_pooling_mode(std::string_view name);

// Throws ModelFileError naming the file for a malformed export, a pooling mode baton
// does not have (max, mean_sqrt_len_tokens, weightedmean), or a module after the
// transformer that it cannot run (a Dense projection, ...).
Pooling read_pooling(const ModelSource& source);
inline Pooling read_pooling(const std::filesystem::path& path) {
  return read_pooling(ModelSource::open(path));
}

// Pools `hidden`, row-major [tokens x width], into one vector of `width`.
std::vector<float> pool(const Pooling& pooling, std::span<const float> hidden, int tokens,
                        int width);

}  // namespace baton
