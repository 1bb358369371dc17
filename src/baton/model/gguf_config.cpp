#include "baton/model/gguf_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "baton/model/files/mapped_file.h"
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
  std::int64_t integer(const std::string& key) const {
    const ordered_json* value = find(key);
    if (value == nullptr) throw ModelFileError(file_, "GGUF: no metadata key '" + key + "'");
    if (!value->is_number_integer()) {
      throw ModelFileError(file_, "GGUF: metadata key '" + key + "' is not an integer");
    }
    return value->get<std::int64_t>();
  }
  // Copies key `key`, when present, into `out[name]` if it has the JSON type of a number.
  void copy_number(const std::string& key, json& out, const char* name) const {
    if (const ordered_json* value = find(key); value != nullptr && value->is_number()) {
      out[name] = *value;
    }
  }

 private:
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
  m.copy_number(arch + ".attention.head_count_kv", c, "num_key_value_heads");
  m.copy_number(arch + ".attention.key_length", c, "head_dim");
  m.copy_number(arch + ".context_length", c, "max_position_embeddings");
  m.copy_number(arch + ".attention.layer_norm_rms_epsilon", c, "rms_norm_eps");
  m.copy_number(arch + ".rope.freq_base", c, "rope_theta");
  if (const ordered_json* type = m.find(arch + ".rope.scaling.type");
      type != nullptr && type->is_string() && *type != "none") {
    c["rope_scaling"] = {{"type", *type}};
    m.copy_number(arch + ".rope.scaling.factor", c["rope_scaling"], "factor");
  }
  m.copy_number("tokenizer.ggml.bos_token_id", c, "bos_token_id");
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
  ModelConfig config = parse_model_config(hf_config(header, metadata, file).dump(), file);
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

ModelConfig read_gguf_model_config(const std::filesystem::path& file) {
  const MappedFile mapped(file);
  const GgufHeader header = read_gguf_header(mapped.bytes(), file.string());
  for (const GgufTensor& t : header.tensors) {
    if (t.name == "rope_freqs.weight") {
      const TensorView view = gguf_tensor_view(t, mapped.bytes(), file.string());
      return gguf_model_config(header, &view, file.string());
    }
  }
  return gguf_model_config(header, nullptr, file.string());
}

}  // namespace baton
