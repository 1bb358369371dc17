#include "baton/model/config/gguf_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

class Metadata {
 public:
  Metadata(const GgufHeader& header, std::string file) : header_(header), file_(std::move(file)) {}

  const ordered_json* find(const std::string& key) const {
    const auto it = header_.metadata.find(key);
    return it == header_.metadata.end() ? nullptr : &*it;
  }
  // Integer key `key`, which must be positive and fit an int (the forward pass's sizes).
  std::int64_t integer(const std::string& key) const {
    const ordered_json* value = find(key);
    if (value == nullptr) throw ModelFileError(file_, "GGUF: no metadata key '" + key + "'");
    return positive_int(key, *value);
  }
  // Copies integer key `key`, when present, into `out[name]`; checked as integer().
  void copy_int(const std::string& key, json& out, const char* name) const {
    if (const ordered_json* value = find(key); value != nullptr) {
      out[name] = positive_int(key, *value);
    }
  }
  // Copies number key `key`, when present, into `out[name]`; it must be positive and finite.
  void copy_number(const std::string& key, json& out, const char* name) const {
    const ordered_json* value = find(key);
    if (value == nullptr) return;
    if (!value->is_number()) fail(key, "is not a number");
    const auto number = value->get<double>();
    if (!std::isfinite(number) || number <= 0) {
      fail(key, "is " + value->dump() + "; it must be a positive finite number");
    }
    out[name] = *value;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw ModelFileError(file_, "GGUF: metadata key '" + key + "' " + problem);
  }

 private:
  std::int64_t positive_int(const std::string& key, const ordered_json& value) const {
    if (!value.is_number_integer()) fail(key, "is not an integer");
    // An unsigned 64-bit value above INT64_MAX would read as negative.
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<int>::max()}) {
      fail(key,
           "is " + value.dump() + "; at most " + std::to_string(std::numeric_limits<int>::max()));
    }
    const auto number = value.get<std::int64_t>();
    if (number <= 0 || number > std::numeric_limits<int>::max()) {
      fail(key, "is " + value.dump() + "; it must be a positive integer of at most " +
                    std::to_string(std::numeric_limits<int>::max()));
    }
    return number;
  }

  const GgufHeader& header_;
  std::string file_;
};

bool has_tensor(const GgufHeader& header, const std::string& name) {
  return std::any_of(header.tensors.begin(), header.tensors.end(),
                     [&](const GgufTensor& t) { return t.name == name; });
}

// The vocabulary: the token list's length, else the embedding's rows.
std::int64_t vocab_size(const GgufHeader& header, const Metadata& m, const std::string& arch) {
  if (const ordered_json* tokens = m.find("tokenizer.ggml.tokens"); tokens && tokens->is_array()) {
    return static_cast<std::int64_t>(tokens->size());
  }
  if (m.find(arch + ".vocab_size") != nullptr) return m.integer(arch + ".vocab_size");
  for (const GgufTensor& t : header.tensors) {
    if (t.name == "token_embd.weight" && t.dims.size() == 2) {
      return static_cast<std::int64_t>(t.dims[1]);
    }
  }
  return 0;
}

// RoPE turns every pair of a head's dimensions here: a file that rotates fewer (or none)
// would be run wrongly, so it is refused.
void check_rope_dimensions(const Metadata& m, const std::string& arch, const json& config) {
  const std::string key = arch + ".rope.dimension_count";
  if (m.find(key) == nullptr) return;
  json rotated;
  m.copy_int(key, rotated, "n");
  const std::int64_t head_dim = config.contains("head_dim")
                                    ? config["head_dim"].get<std::int64_t>()
                                    : config["hidden_size"].get<std::int64_t>() /
                                          config["num_attention_heads"].get<std::int64_t>();
  if (rotated["n"].get<std::int64_t>() != head_dim) {
    m.fail(key, "is " + rotated["n"].dump() + "; only RoPE over the whole head (" +
                    std::to_string(head_dim) + " dimensions) is supported");
  }
}

// config.json's keys, from the metadata.
json hf_config(const GgufHeader& header, const Metadata& m, const std::string& file) {
  const ordered_json* arch_value = m.find("general.architecture");
  if (arch_value == nullptr || !arch_value->is_string()) {
    throw ModelFileError(file, "GGUF: no general.architecture");
  }
  const std::string arch = arch_value->get<std::string>();
  if (arch != "llama" && arch != "qwen2" && arch != "qwen3" && arch != "mistral") {
    throw ModelFileError(file, "GGUF: architecture '" + arch +
                                   "' is not supported (known: llama, mistral, qwen2, qwen3)");
  }
  json c = {{"model_type", arch},
            {"vocab_size", vocab_size(header, m, arch)},
            {"hidden_size", m.integer(arch + ".embedding_length")},
            {"intermediate_size", m.integer(arch + ".feed_forward_length")},
            {"num_hidden_layers", m.integer(arch + ".block_count")},
            {"num_attention_heads", m.integer(arch + ".attention.head_count")},
            {"tie_word_embeddings", !has_tensor(header, "output.weight")},
            {"attention_bias", has_tensor(header, "blk.0.attn_q.bias")},
            {"eos_token_id", json::array()}};
  m.copy_int(arch + ".attention.head_count_kv", c, "num_key_value_heads");
  m.copy_int(arch + ".attention.key_length", c, "head_dim");
  m.copy_int(arch + ".context_length", c, "max_position_embeddings");
  m.copy_number(arch + ".attention.layer_norm_rms_epsilon", c, "rms_norm_eps");
  m.copy_number(arch + ".rope.freq_base", c, "rope_theta");
  if (const ordered_json* type = m.find(arch + ".rope.scaling.type");
      type != nullptr && type->is_string() && *type != "none") {
    c["rope_scaling"] = {{"type", *type}};
    m.copy_number(arch + ".rope.scaling.factor", c["rope_scaling"], "factor");
  }
  check_rope_dimensions(m, arch, c);
  if (const ordered_json* bos = m.find("tokenizer.ggml.bos_token_id");
      bos != nullptr && bos->is_number_integer()) {
    c["bos_token_id"] = *bos;
  }
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"}) {
    const ordered_json* id = m.find(key);
    if (id != nullptr && id->is_number_integer() &&
        std::find(c["eos_token_id"].begin(), c["eos_token_id"].end(), *id) ==
            c["eos_token_id"].end()) {
      c["eos_token_id"].push_back(id->get<std::int64_t>());
    }
  }
  return c;
}

}  // namespace

ModelConfig gguf_model_config(const GgufHeader& header, const TensorView* rope_freqs,
                              const std::string& file) {
  const Metadata metadata(header, file);
  ModelConfig config = model_config_from_json(hf_config(header, metadata, file), file);
  if (rope_freqs != nullptr) {
    if (rope_freqs->element_count() != static_cast<std::size_t>(config.head_dim / 2)) {
      throw ModelFileError(
          file, "GGUF: rope_freqs.weight holds " + std::to_string(rope_freqs->element_count()) +
                    " values; head_dim / 2 is " + std::to_string(config.head_dim / 2));
    }
    config.rope_scaling.type = "divisors";
    config.rope_scaling.divisors = to_float(*rope_freqs);
  }
  return config;
}

ModelConfig gguf_model_config(const GgufFile& file) {
  const std::string name = file.path().string();
  for (const GgufTensor& t : file.header().tensors) {
    if (t.name == "rope_freqs.weight") {
      const TensorView view = gguf_tensor_view(t, file.bytes(), name);
      return gguf_model_config(file.header(), &view, name);
    }
  }
  return gguf_model_config(file.header(), nullptr, name);
}

}  // namespace baton
