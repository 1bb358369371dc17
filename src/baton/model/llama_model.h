// LlamaModel: the forward pass of the Llama family (llama, mistral, qwen2, qwen3) on the
// CPU, in f32 with OpenBLAS for the matrix products: RMSNorm, grouped-query attention with
// rotary positions (and q/k/v bias for qwen2, per-head q/k RMSNorm for qwen3, a sliding
// window for mistral when set), SwiGLU MLP, tied or separate output embedding. Weights
// are converted to f32 once at load. Tokens extend a KvCache; logits come back for every
// new position.
// Thread-safety: the model is immutable after load; forward() may run on several threads
// at once, each with its own KvCache.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "baton/model/model_config.h"
#include "baton/model/model_weights.h"
#include "baton/model/token_id.h"

namespace baton {

// Keys and values of one sequence, per layer [capacity x kv_heads x head_dim].
class KvCache {
 public:
  KvCache(const ModelConfig& config, int capacity);
  int length() const { return length_; }
  int capacity() const { return capacity_; }

 private:
  friend class LlamaModel;
  int capacity_;
  int length_ = 0;
  std::vector<std::vector<float>> keys_;    // per layer
  std::vector<std::vector<float>> values_;  // per layer
};

class LlamaModel {
 public:
  // Reads config.json and the safetensors weights of a model directory (ModelFileError).
  static LlamaModel load(const std::filesystem::path& directory);
  LlamaModel(ModelConfig config, const ModelWeights& weights);

  const ModelConfig& config() const { return config_; }
  // Runs `tokens` after what `cache` holds and returns their logits, row-major
  // [tokens x vocab]. `between_layers` (may be empty) runs after each layer but the last:
  // where an engine yields the GPU turn. Throws std::length_error when the cache is full.
  std::vector<float> forward(std::span<const TokenId> tokens, KvCache& cache,
                             const std::function<void()>& between_layers = {}) const;

 private:
  struct Layer {
    std::vector<float> attn_norm, q, k, v, o, q_bias, k_bias, v_bias, q_norm, k_norm;
    std::vector<float> mlp_norm, gate, up, down;
  };

  void attention(const Layer& layer, int layer_index, std::vector<float>& x, int count,
                 KvCache& cache) const;
  void mlp(const Layer& layer, std::vector<float>& x, int count) const;

  ModelConfig config_;
  std::vector<float> embed_;    // [vocab x hidden]
  std::vector<float> lm_head_;  // [vocab x hidden]; empty when tied to embed_
  std::vector<float> final_norm_;
  std::vector<Layer> layers_;
  std::vector<float> inverse_frequencies_;
};

}  // namespace baton
