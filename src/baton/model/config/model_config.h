// ModelConfig: the shape of a Llama-family model, read from a Hugging Face `config.json`.
// Accepts what published models contain across transformers versions: `torch_dtype`
// (v4) or `dtype` (v5); `rope_theta` and `rope_scaling` (with `type` or `rope_type`) at
// the top level (v4) or inside `rope_parameters` (v5); `num_key_value_heads` absent (no
// grouped-query attention); `head_dim` absent (hidden / heads); `eos_token_id` as a number
// or a list. Architectures: llama (2, 3 with llama3 RoPE scaling), mistral, qwen2 (q/k/v
// bias), qwen3 (q/k RMSNorm).
// Thread-safety: a value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/tokenizer/token_id.h"

namespace baton {

enum class ModelArch { llama, mistral, qwen2, qwen3 };

std::string_view to_string(ModelArch arch);

struct RopeScaling {
  std::string type = "default";  // default, linear, llama3, divisors (a GGUF's rope_freqs)
  double factor = 1.0;
  double low_freq_factor = 1.0;                          // llama3
  double high_freq_factor = 4.0;                         // llama3
  std::int64_t original_max_position_embeddings = 8192;  // llama3
  std::vector<float> divisors;  // divisors: one per frequency, theta^(-2i/d) / divisors[i]
};

// Sampling defaults a model ships in generation_config.json (what transformers applies
// when the caller sets nothing).
struct GenerationDefaults {
  std::optional<bool> do_sample;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> top_k;
  std::optional<double> repetition_penalty;
};

struct ModelConfig {
  ModelArch arch = ModelArch::llama;
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;                 // q/k/v projections carry a bias (qwen2: always)
  bool qk_norm = false;                        // RMSNorm on q and k per head (qwen3)
  std::optional<std::int64_t> sliding_window;  // mistral, when set
  std::string dtype = "bfloat16";
  std::optional<std::int64_t> bos_token_id;
  std::vector<std::int64_t> eos_token_ids;  // config.json's and generation_config.json's
  GenerationDefaults generation;
};

// eos_token_ids as the tokenizer's ids: the tokens that end an answer.
std::vector<TokenId> end_token_ids(const ModelConfig& config);

// Parses the text of a config.json; `file` names it in errors. Throws ModelFileError
// naming the file and the key for a missing or wrong-typed key, an unknown architecture,
// or sizes that do not fit together (heads not dividing, kv heads not dividing heads).
ModelConfig parse_model_config(std::string_view json_text, std::string_view file);
// The same for a config.json already parsed (gguf_config's, made from GGUF metadata).
ModelConfig model_config_from_json(const nlohmann::json& root, std::string_view file);
// Adds what generation_config.json says (its end tokens, its sampling defaults) to
// `config`; ModelFileError naming the file for bad JSON or wrong-typed keys.
void merge_generation_config(std::string_view json_text, std::string_view file,
                             ModelConfig& config);
// A Hugging Face directory's config.json, and its generation_config.json when it has one
// (config_reader.h reads either kind of model).
ModelConfig read_hf_model_config(const std::filesystem::path& directory);

}  // namespace baton
