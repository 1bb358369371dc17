// config.json files as published models carry them, written by transformers 4 and 5.
#include "baton/model/config/config_reader.h"

#include <gtest/gtest.h>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

// Llama 3.1 8B as published (transformers 4.43): GQA, llama3 RoPE scaling under
// "rope_type", eos as a list.
constexpr const char* kLlama31 = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": false,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0", "vocab_size": 128256})";

TEST(ModelConfig, Llama31FromTransformers4) {
  const ModelConfig c = parse_model_config(kLlama31, "config.json");
  EXPECT_EQ(c.arch, ModelArch::llama);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.factor, 8.0);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(c.eos_token_ids, (std::vector<std::int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_FALSE(c.attention_bias);
}

TEST(ModelConfig, RopeParametersAndDtypeFromTransformers5) {
  // transformers 5 moves theta and scaling into "rope_parameters" and writes "dtype".
  const ModelConfig c = parse_model_config(R"({
    "model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300, "dtype": "float32",
    "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
                        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                        "original_max_position_embeddings": 8192},
    "eos_token_id": 2})",
                                           "config.json");
  EXPECT_EQ(c.rope_theta, 500000.0);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_EQ(c.rope_scaling.factor, 32.0);
  EXPECT_EQ(c.dtype, "float32");
  EXPECT_EQ(c.eos_token_ids, std::vector<std::int64_t>{2});
  EXPECT_EQ(c.head_dim, 16);
}

TEST(ModelConfig, QwenAndMistralFamilies) {
  // Qwen2.5 0.5B: tied embeddings; the q/k/v bias is implied by the architecture.
  const ModelConfig qwen2 = parse_model_config(R"({
    "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
    "vocab_size": 151936, "rope_theta": 1000000.0, "rms_norm_eps": 1e-06,
    "tie_word_embeddings": true, "use_sliding_window": false, "sliding_window": 32768,
    "torch_dtype": "bfloat16", "bos_token_id": 151643, "eos_token_id": 151643})",
                                               "config.json");
  EXPECT_TRUE(qwen2.attention_bias);
  EXPECT_TRUE(qwen2.tie_word_embeddings);
  EXPECT_EQ(qwen2.head_dim, 64);
  EXPECT_FALSE(qwen2.sliding_window.has_value());
  // Qwen3 0.6B: head_dim given and not hidden / heads; q/k norms.
  const ModelConfig qwen3 = parse_model_config(R"({
    "model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "head_dim": 128,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
    "vocab_size": 151936, "attention_bias": false, "tie_word_embeddings": true})",
                                               "config.json");
  EXPECT_EQ(qwen3.head_dim, 128);
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_FALSE(qwen3.attention_bias);
  // Mistral 7B v0.1: sliding window; Llama 2 style configs may omit num_key_value_heads.
  const ModelConfig mistral = parse_model_config(R"({
    "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 32000, "sliding_window": 4096, "rope_theta": 10000.0})",
                                                 "config.json");
  EXPECT_EQ(mistral.sliding_window, 4096);
  const ModelConfig llama2 = parse_model_config(R"({
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000,
    "rope_scaling": null})",
                                                "config.json");
  EXPECT_EQ(llama2.num_kv_heads, 32);
  EXPECT_EQ(llama2.rope_scaling.type, "default");
}

TEST(ModelConfig, BadFilesNameTheFileAndTheKey) {
  const struct {
    const char* json;
    const char* message;
  } cases[] = {
      {"{", "not valid JSON"},
      {"[1]", "not a JSON object"},
      {R"({"model_type": "gpt2"})", "'model_type' is 'gpt2'"},
      {R"({"model_type": "llama", "hidden_size": 64})", "'vocab_size' is missing"},
      {R"({"model_type": "llama", "vocab_size": 10, "hidden_size": "64"})",
       "'hidden_size' must be a positive integer"},
      {R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 64, "intermediate_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 3})",
       "'num_key_value_heads' must divide"},
      {R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 64, "intermediate_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 4,
           "rope_scaling": {"type": "yarn", "factor": 4}})",
       "'rope_type' is 'yarn'"},
      {R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 64, "intermediate_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 4, "hidden_act": "gelu"})",
       "'hidden_act' is 'gelu'; supported: silu"},
  };
  for (const auto& c : cases) {
    try {
      parse_model_config(c.json, "some/config.json");
      ADD_FAILURE() << "accepted: " << c.json;
    } catch (const ModelFileError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("some/config.json"), std::string::npos) << what;
      EXPECT_NE(what.find(c.message), std::string::npos) << what;
    }
  }
}

TEST(ModelConfig, GenerationConfigAddsEndTokensAndSamplingDefaults) {
  // Qwen2.5-Instruct's generation_config.json: a second end token and sampling defaults.
  ModelConfig c = parse_model_config(R"({"model_type": "qwen2", "vocab_size": 151936,
      "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
      "num_attention_heads": 14, "num_key_value_heads": 2, "eos_token_id": 151645})",
                                     "config.json");
  merge_generation_config(R"({"bos_token_id": 151643, "do_sample": true,
      "eos_token_id": [151645, 151643], "pad_token_id": 151643, "repetition_penalty": 1.1,
      "temperature": 0.7, "top_k": 20, "top_p": 0.8, "transformers_version": "4.37.0"})",
                          "generation_config.json", c);
  EXPECT_EQ(c.eos_token_ids, (std::vector<std::int64_t>{151645, 151643}));
  EXPECT_EQ(c.generation.do_sample, true);
  EXPECT_EQ(c.generation.temperature, 0.7);
  EXPECT_EQ(c.generation.top_p, 0.8);
  EXPECT_EQ(c.generation.top_k, 20);
  EXPECT_EQ(c.generation.repetition_penalty, 1.1);
  try {
    merge_generation_config(R"({"temperature": "hot"})", "dir/generation_config.json", c);
    FAIL() << "a string temperature must be refused";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("dir/generation_config.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("temperature"), std::string::npos);
  }
}

TEST(ModelConfig, MissingFileNamesThePath) {
  EXPECT_THROW(read_model_config("/nonexistent/model"), ModelFileError);
}

}  // namespace
}  // namespace baton
