// baton_gguf: converts a Llama-family Hugging Face model directory (config.json, safetensors
// in bf16/f16/f32, tokenizer.json) into a GGUF v3 file for llama.cpp, so that the CPU
// benchmark's peer (bench/peers/llama_cpp_bench.mjs) runs the very weights baton runs.
// Usage: baton_gguf MODEL_DIR OUT.gguf --type f16|bf16|q8_0|f32
// Matrices are stored in the requested type (q8_0 falls back to f16 for a matrix whose rows
// are not a multiple of 32), norms and biases in f32. Names and metadata are llama.cpp's:
// archs llama (also for mistral), qwen2, qwen3. For "llama" the q and k rows are reordered
// within each head, because llama.cpp rotates adjacent pairs there while Hugging Face
// rotates halves; qwen2 and qwen3 use the halves ("NEOX") rotation in llama.cpp, so their
// rows stay as they are. Llama 3 RoPE scaling becomes the rope_freqs tensor of per-frequency
// divisors, linear scaling the rope.scaling keys.
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/config/config_reader.h"
#include "baton/model/weights/model_weights.h"
#include "gguf_file.h"
#include "gguf_tensors.h"
#include "gguf_vocab.h"

namespace {

using baton::ModelArch;
using baton::ModelConfig;
using baton::ModelWeights;
using baton::TensorView;
using baton::peers::GgmlType;
using baton::peers::GgufFile;

struct Options {
  std::filesystem::path model_dir;
  std::filesystem::path out;
  GgmlType type = GgmlType::f16;
};

constexpr const char* kUsage = "usage: baton_gguf MODEL_DIR OUT.gguf --type f16|bf16|q8_0|f32\n";

std::optional<GgmlType> parse_type(std::string_view name) {
  if (name == "f16") return GgmlType::f16;
  if (name == "bf16") return GgmlType::bf16;
  if (name == "q8_0") return GgmlType::q8_0;
  if (name == "f32") return GgmlType::f32;
  return std::nullopt;
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options options;
  std::vector<std::string_view> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--type" && i + 1 < argc) {
      const auto type = parse_type(argv[++i]);
      if (!type) return std::nullopt;
      options.type = *type;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) return std::nullopt;
  options.model_dir = positional[0];
  options.out = positional[1];
  return options;
}

// llama.cpp's architecture name: mistral's is llama's.
std::string gguf_arch(ModelArch arch) {
  switch (arch) {
    case ModelArch::llama:
    case ModelArch::mistral:
      return "llama";
    case ModelArch::qwen2:
      return "qwen2";
    case ModelArch::qwen3:
      return "qwen3";
  }
  return "llama";
}

// general.file_type: llama.cpp's llama_ftype for "mostly" this type.
std::uint32_t file_type(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return 0;
    case GgmlType::f16:
      return 1;
    case GgmlType::q8_0:
      return 7;
    case GgmlType::bf16:
      return 32;
  }
  return 1;
}

std::string_view type_name(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return "f32";
    case GgmlType::f16:
      return "f16";
    case GgmlType::q8_0:
      return "q8_0";
    case GgmlType::bf16:
      return "bf16";
  }
  return "?";
}

std::uint32_t u32(std::int64_t value) { return static_cast<std::uint32_t>(value); }

void add_hyperparameters(GgufFile& file, const ModelConfig& c, const std::string& arch,
                         const Options& options) {
  file.add_string("general.architecture", arch);
  std::filesystem::path dir = options.model_dir;
  if (dir.filename().empty()) dir = dir.parent_path();  // "models/x/"
  file.add_string("general.name", dir.filename().string());
  file.add_u32("general.file_type", file_type(options.type));
  if (options.type == GgmlType::q8_0) file.add_u32("general.quantization_version", 2);
  file.add_u32(arch + ".vocab_size", u32(c.vocab_size));
  file.add_u32(arch + ".context_length", u32(c.max_position_embeddings));
  file.add_u32(arch + ".embedding_length", u32(c.hidden_size));
  file.add_u32(arch + ".block_count", u32(c.num_layers));
  file.add_u32(arch + ".feed_forward_length", u32(c.intermediate_size));
  file.add_u32(arch + ".attention.head_count", u32(c.num_heads));
  file.add_u32(arch + ".attention.head_count_kv", u32(c.num_kv_heads));
  file.add_f32(arch + ".attention.layer_norm_rms_epsilon", static_cast<float>(c.rms_norm_eps));
  file.add_f32(arch + ".rope.freq_base", static_cast<float>(c.rope_theta));
  file.add_u32(arch + ".rope.dimension_count", u32(c.head_dim));
  // llama.cpp assumes hidden / heads per head unless told (qwen3 and some llamas differ).
  if (c.head_dim * c.num_heads != c.hidden_size) {
    file.add_u32(arch + ".attention.key_length", u32(c.head_dim));
    file.add_u32(arch + ".attention.value_length", u32(c.head_dim));
  }
  if (c.rope_scaling.type == "linear") {
    file.add_string(arch + ".rope.scaling.type", "linear");
    file.add_f32(arch + ".rope.scaling.factor", static_cast<float>(c.rope_scaling.factor));
  }
}

// Llama 3 scaling as llama.cpp takes it: one divisor per frequency (theta^(-2i/d) is
// divided by it), the factor for long wavelengths, 1 for short ones, a smooth ramp between.
std::vector<float> llama3_rope_divisors(const ModelConfig& c) {
  const baton::RopeScaling& s = c.rope_scaling;
  const auto old_context = static_cast<double>(s.original_max_position_embeddings);
  const double low_wavelen = old_context / s.low_freq_factor;
  const double high_wavelen = old_context / s.high_freq_factor;
  std::vector<float> divisors;
  for (std::int64_t i = 0; i < c.head_dim / 2; ++i) {
    const double freq =
        std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double divisor = 1.0;
    if (wavelen > low_wavelen) {
      divisor = s.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth =
          (old_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      divisor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    divisors.push_back(static_cast<float>(divisor));
  }
  return divisors;
}

// Declares the GGUF tensors of a model: each from a safetensors tensor, checked for shape.
class TensorPlan {
 public:
  TensorPlan(GgufFile& file, const ModelWeights& weights, GgmlType matrix_type)
      : file_(file), weights_(weights), matrix_type_(matrix_type) {}

  // A [rows, cols] matrix; `rope_heads` > 0 reorders its rows for interleaved RoPE.
  void matrix(const std::string& from, const std::string& to, std::int64_t rows, std::int64_t cols,
              std::int64_t rope_heads = 0) {
    const TensorView& t = checked(from, {rows, cols});
    GgmlType type = matrix_type_;
    if (type == GgmlType::q8_0 && cols % 32 != 0) {
      std::fprintf(stderr, "baton_gguf: %s: %lld columns, not a multiple of 32: f16\n",
                   from.c_str(), static_cast<long long>(cols));
      type = GgmlType::f16;
    }
    auto order = rope_heads > 0 ? baton::peers::interleaved_rope_rows(rope_heads, rows / rope_heads)
                                : std::vector<std::int64_t>{};
    file_.add_tensor(to, {u32(cols), u32(rows)}, type, [&t, type, order](std::ostream& out) {
      baton::peers::write_tensor(out, t, type, order);
    });
  }

  // A vector of `size`, stored f32 (biases permuted like their matrix rows).
  void vector(const std::string& from, const std::string& to, std::int64_t size,
              std::int64_t rope_heads = 0) {
    const TensorView& t = checked(from, {size});
    auto order = rope_heads > 0 ? baton::peers::interleaved_rope_rows(rope_heads, size / rope_heads)
                                : std::vector<std::int64_t>{};
    file_.add_tensor(to, {u32(size)}, GgmlType::f32, [&t, order](std::ostream& out) {
      baton::peers::write_tensor(out, t, GgmlType::f32, order);
    });
  }

 private:
  const TensorView& checked(const std::string& name, const std::vector<std::int64_t>& shape) {
    const TensorView& t = weights_.at(name);
    if (t.shape != shape) throw std::runtime_error(name + ": unexpected shape");
    return t;
  }

  GgufFile& file_;
  const ModelWeights& weights_;
  GgmlType matrix_type_;
};

void add_layer(TensorPlan& plan, const ModelConfig& c, std::int64_t layer) {
  const std::string hf = "model.layers." + std::to_string(layer) + ".";
  const std::string blk = "blk." + std::to_string(layer) + ".";
  const bool interleave = gguf_arch(c.arch) == "llama";
  const std::int64_t q_heads = interleave ? c.num_heads : 0;
  const std::int64_t k_heads = interleave ? c.num_kv_heads : 0;
  const std::int64_t q_dim = c.num_heads * c.head_dim;
  const std::int64_t kv_dim = c.num_kv_heads * c.head_dim;
  plan.vector(hf + "input_layernorm.weight", blk + "attn_norm.weight", c.hidden_size);
  plan.matrix(hf + "self_attn.q_proj.weight", blk + "attn_q.weight", q_dim, c.hidden_size, q_heads);
  plan.matrix(hf + "self_attn.k_proj.weight", blk + "attn_k.weight", kv_dim, c.hidden_size,
              k_heads);
  plan.matrix(hf + "self_attn.v_proj.weight", blk + "attn_v.weight", kv_dim, c.hidden_size);
  plan.matrix(hf + "self_attn.o_proj.weight", blk + "attn_output.weight", c.hidden_size, q_dim);
  if (c.attention_bias) {
    plan.vector(hf + "self_attn.q_proj.bias", blk + "attn_q.bias", q_dim, q_heads);
    plan.vector(hf + "self_attn.k_proj.bias", blk + "attn_k.bias", kv_dim, k_heads);
    plan.vector(hf + "self_attn.v_proj.bias", blk + "attn_v.bias", kv_dim);
  }
  if (c.qk_norm) {  // per head, applied before RoPE: in the head's own element order
    plan.vector(hf + "self_attn.q_norm.weight", blk + "attn_q_norm.weight", c.head_dim);
    plan.vector(hf + "self_attn.k_norm.weight", blk + "attn_k_norm.weight", c.head_dim);
  }
  plan.vector(hf + "post_attention_layernorm.weight", blk + "ffn_norm.weight", c.hidden_size);
  plan.matrix(hf + "mlp.gate_proj.weight", blk + "ffn_gate.weight", c.intermediate_size,
              c.hidden_size);
  plan.matrix(hf + "mlp.up_proj.weight", blk + "ffn_up.weight", c.intermediate_size, c.hidden_size);
  plan.matrix(hf + "mlp.down_proj.weight", blk + "ffn_down.weight", c.hidden_size,
              c.intermediate_size);
}

void add_tensors(GgufFile& file, const ModelWeights& weights, const ModelConfig& c, GgmlType type,
                 const std::vector<float>& rope_divisors) {
  TensorPlan plan(file, weights, type);
  plan.matrix("model.embed_tokens.weight", "token_embd.weight", c.vocab_size, c.hidden_size);
  if (!rope_divisors.empty()) {
    file.add_tensor("rope_freqs.weight", {rope_divisors.size()}, GgmlType::f32,
                    [&rope_divisors](std::ostream& out) {
                      out.write(reinterpret_cast<const char*>(rope_divisors.data()),
                                static_cast<std::streamsize>(rope_divisors.size() * 4));
                    });
  }
  for (std::int64_t layer = 0; layer < c.num_layers; ++layer) add_layer(plan, c, layer);
  plan.vector("model.norm.weight", "output_norm.weight", c.hidden_size);
  // As baton does: an lm_head present is used even when the config says tied.
  if (!c.tie_word_embeddings || weights.find("lm_head.weight") != nullptr) {
    plan.matrix("lm_head.weight", "output.weight", c.vocab_size, c.hidden_size);
  }
}

int convert(const Options& options) {
  const ModelConfig config = baton::read_model_config(options.model_dir);
  const ModelWeights weights = ModelWeights::open(options.model_dir);
  const std::string arch = gguf_arch(config.arch);
  if (config.sliding_window && *config.sliding_window < config.max_position_embeddings) {
    std::fprintf(stderr, "baton_gguf: warning: llama.cpp's llama arch ignores sliding_window\n");
  }
  if (config.rope_scaling.type != "default" && config.rope_scaling.type != "linear" &&
      config.rope_scaling.type != "llama3") {
    throw std::runtime_error("rope scaling '" + config.rope_scaling.type + "' is not supported");
  }
  GgufFile file;
  add_hyperparameters(file, config, arch, options);
  const baton::peers::GgufVocab vocab = baton::peers::read_vocab(options.model_dir, config);
  baton::peers::add_vocab(file, vocab, config);
  const std::vector<float> rope_divisors =
      config.rope_scaling.type == "llama3" ? llama3_rope_divisors(config) : std::vector<float>{};
  add_tensors(file, weights, config, options.type, rope_divisors);
  file.write(options.out);
  std::printf("%s: arch %s, %s, %lld layers, vocab %zu (%s, %s, pre %s, %zu merges)\n",
              options.out.string().c_str(), arch.c_str(),
              std::string(type_name(options.type)).c_str(),
              static_cast<long long>(config.num_layers), vocab.tokens.size(),
              vocab.from_tokenizer_json ? "tokenizer.json" : "byte symbols", vocab.model.c_str(),
              vocab.pre.c_str(),
              vocab.merges.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = parse_args(argc, argv);
  if (!options) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  try {
    return convert(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton_gguf: %s\n", e.what());
    return 1;
  }
}
