// A small Hugging Face-style model directory with random weights, for tests and demos
// (`baton make-model`): config.json and generation_config.json as transformers 5 writes
// them, model.safetensors, and the tokenizer of tokenizer_writer.h (tokenizer.json,
// tokenizer_config.json). baton's read_model_config, LlamaModel and BpeTokenizer load it.
// Weights come from seeded std::mt19937_64s, one per chunk of 64K values (drawn on every
// core): matrices and biases normal with std 0.02, norms 1, so the same seed gives the same
// bytes and the logits are not degenerate. The safetensors file is streamed chunk by chunk
// (the 8B preset is 16 GB in bf16), and
// every file is written in a temporary directory beside the target and moved into place at
// the end, so a crash never leaves a half-written model.
// Thread-safety: pure functions; write_model touches only its directory and the temporary
// one beside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/config/model_config.h"

namespace baton {

struct ModelShape {
  std::int64_t vocab_size = 1024;  // >= the tokenizer's size; the rest is padding
  std::int64_t hidden_size = 64;
  std::int64_t intermediate_size = 128;
  std::int64_t num_layers = 2;
  std::int64_t num_heads = 4;
  std::int64_t num_kv_heads = 2;
  std::int64_t head_dim = 16;
  std::int64_t max_position_embeddings = 2048;
  bool tie_word_embeddings = false;
  std::string dtype = "bfloat16";  // or "float32"
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-6;
};

// llama, qwen2 or qwen3 (the archs with a chat format in tokenizer_writer.h); anything
// else throws std::invalid_argument listing them.
ModelArch writable_arch(std::string_view name);

// "tiny": hidden 64, 2 layers, 4 heads, 2 kv heads, intermediate 128, vocab 1024, with the
// family's rope theta, norm eps and embedding tying. "qwen2.5-0.5b": the real shapes of
// Qwen2.5-0.5B (494M parameters as qwen2). "llama-3-8b": those of Llama-3.1-8B (8.0B
// parameters, its 131072 positions without their RoPE scaling). Other names throw
// std::invalid_argument.
ModelShape model_shape(std::string_view name, ModelArch arch);

// Throws std::invalid_argument for a shape the config reader or the forward pass would
// refuse, or an absurd one: a size outside 1..2^20 (layers: 1..1024), kv heads not
// dividing heads, an odd head_dim,
// head_dim * heads != hidden for qwen2 (its config.json has no head_dim), a dtype other
// than bfloat16 or float32.
void check_shape(ModelArch arch, const ModelShape& shape);

// The number of weights written for `arch` with `shape`.
std::int64_t parameter_count(ModelArch arch, const ModelShape& shape);
// The bytes of model.safetensors's tensor data (the other files add a few KiB).
std::uint64_t weight_bytes(ModelArch arch, const ModelShape& shape);

// Called as the weights are written: bytes of tensor data so far, of `total`. It may throw
// to stop the write (a stop signal): the staging directory is removed on the way out.
using WriteProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct WrittenModel {
  std::filesystem::path directory;
  std::vector<std::string> files;  // in the order written
  std::int64_t parameters = 0;
  std::uintmax_t bytes = 0;  // all files together
  std::int64_t tokenizer_size = 0;
};

// Writes the model into `directory` (created with its parents when missing; in an existing
// directory, files of the same names are replaced and others left alone). Throws
// std::invalid_argument for a bad shape or a vocab_size below the tokenizer's size, and
// std::filesystem::filesystem_error or std::runtime_error when writing fails.
WrittenModel write_model(const std::filesystem::path& directory, ModelArch arch,
                         const ModelShape& shape, std::uint64_t seed,
                         const WriteProgress& progress = {});

}  // namespace baton
