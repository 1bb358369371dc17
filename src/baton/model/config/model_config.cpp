#include "baton/model/config/model_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "baton/common/read_file.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& root, std::string_view file) : root_(root), file_(file) {}

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const {
    throw ModelFileError(file_, "'" + std::string(key) + "' " + std::string(problem));
  }

  const json* find(const json& object, std::string_view key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  std::int64_t positive_int(std::string_view key) const {
    const json* v = find(root_, key);
    if (v == nullptr) fail(key, "is missing");
    if (!v->is_number_integer() || v->get<std::int64_t>() <= 0) {
      fail(key, "must be a positive integer");
    }
    return v->get<std::int64_t>();
  }

  std::optional<std::int64_t> optional_int(const json& object, std::string_view key) const {
    const json* v = find(object, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer()) fail(key, "must be an integer");
    return v->get<std::int64_t>();
  }

  std::optional<double> optional_number(const json& object, std::string_view key) const {
    const json* v = find(object, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) fail(key, "must be a number");
    return v->get<double>();
  }

  bool flag(std::string_view key, bool fallback) const {
    const json* v = find(root_, key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(key, "must be true or false");
    return v->get<bool>();
  }

  std::string text(std::string_view key, std::string fallback) const {
    const json* v = find(root_, key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) fail(key, "must be a string");
    return v->get<std::string>();
  }

  std::vector<std::int64_t> int_list(std::string_view key) const {
    const json* v = find(root_, key);
    if (v == nullptr) return {};
    if (v->is_number_integer()) return {v->get<std::int64_t>()};
    if (!v->is_array()) fail(key, "must be an integer or a list of integers");
    std::vector<std::int64_t> out;
    for (const json& item : *v) {
      if (!item.is_number_integer()) fail(key, "must be an integer or a list of integers");
      out.push_back(item.get<std::int64_t>());
    }
    return out;
  }

  const json& root() const { return root_; }

 private:
  const json& root_;
  std::string_view file_;
};

ModelArch parse_arch(const Reader& r) {
  const std::string type = r.text("model_type", "");
  if (type == "llama") return ModelArch::llama;
  if (type == "mistral") return ModelArch::mistral;
  if (type == "qwen2") return ModelArch::qwen2;
  if (type == "qwen3") return ModelArch::qwen3;
  r.fail("model_type", "is '" + type + "'; known: llama, mistral, qwen2, qwen3");
}

// v5 keeps theta and the scaling in `rope_parameters`; v4 has `rope_theta` and
// `rope_scaling` at the top level, the scaling's kind under `type` or `rope_type`.
void parse_rope(const Reader& r, ModelConfig& c) {
  const json* params = r.find(r.root(), "rope_parameters");
  const json* scaling = params != nullptr ? params : r.find(r.root(), "rope_scaling");
  if (params != nullptr && !params->is_object()) r.fail("rope_parameters", "must be an object");
  c.rope_theta = r.optional_number(params != nullptr ? *params : r.root(), "rope_theta")
                     .value_or(c.rope_theta);
  if (scaling == nullptr) return;
  if (!scaling->is_object()) r.fail("rope_scaling", "must be an object");
  const json* type = r.find(*scaling, "rope_type");
  if (type == nullptr) type = r.find(*scaling, "type");
  RopeScaling& s = c.rope_scaling;
  if (type != nullptr) {
    if (!type->is_string()) r.fail("rope_type", "must be a string");
    s.type = type->get<std::string>();
  }
  if (s.type != "default" && s.type != "linear" && s.type != "llama3") {
    r.fail("rope_type", "is '" + s.type + "'; supported: default, linear, llama3");
  }
  s.factor = r.optional_number(*scaling, "factor").value_or(s.factor);
  s.low_freq_factor = r.optional_number(*scaling, "low_freq_factor").value_or(s.low_freq_factor);
  s.high_freq_factor = r.optional_number(*scaling, "high_freq_factor").value_or(s.high_freq_factor);
  s.original_max_position_embeddings = r.optional_int(*scaling, "original_max_position_embeddings")
                                           .value_or(s.original_max_position_embeddings);
}

json parse_object(std::string_view json_text, std::string_view file) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) throw ModelFileError(file, "is not valid JSON");
  if (!root.is_object()) throw ModelFileError(file, "is not a JSON object");
  return root;
}

// The forward pass gates the MLP with SiLU only; transformers calls it "silu" or "swish".
void check_activation(const Reader& r) {
  const std::string act = r.text("hidden_act", "silu");
  if (act != "silu" && act != "swish") r.fail("hidden_act", "is '" + act + "'; supported: silu");
}

void check_shapes(const Reader& r, const ModelConfig& c) {
  if (c.num_kv_heads <= 0 || c.num_heads % c.num_kv_heads != 0) {
    r.fail("num_key_value_heads", "must divide num_attention_heads");
  }
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) r.fail("head_dim", "must be a positive even number");
  // Context lengths are ints downstream (a request's maximum context, the KV plan).
  if (c.max_position_embeddings <= 0 ||
      c.max_position_embeddings > std::numeric_limits<int>::max()) {
    r.fail("max_position_embeddings", "must be a positive integer that fits an int");
  }
  if (!std::isfinite(c.rope_theta) || c.rope_theta <= 0) {
    r.fail("rope_theta", "must be a positive finite number");
  }
}

}  // namespace

std::string_view to_string(ModelArch arch) {
  switch (arch) {
    case ModelArch::llama:
      return "llama";
    case ModelArch::mistral:
      return "mistral";
    case ModelArch::qwen2:
      return "qwen2";
    case ModelArch::qwen3:
      return "qwen3";
  }
  return "llama";
}

ModelConfig parse_model_config(std::string_view json_text, std::string_view file) {
  return model_config_from_json(parse_object(json_text, file), file);
}

ModelConfig model_config_from_json(const json& root, std::string_view file) {
  if (!root.is_object()) throw ModelFileError(file, "is not a JSON object");
  const Reader r(root, file);
  ModelConfig c;
  c.arch = parse_arch(r);
  c.vocab_size = r.positive_int("vocab_size");
  c.hidden_size = r.positive_int("hidden_size");
  c.intermediate_size = r.positive_int("intermediate_size");
  c.num_layers = r.positive_int("num_hidden_layers");
  c.num_heads = r.positive_int("num_attention_heads");
  c.num_kv_heads = r.optional_int(root, "num_key_value_heads").value_or(c.num_heads);
  if (c.hidden_size % c.num_heads != 0 && !r.find(root, "head_dim")) {
    r.fail("num_attention_heads", "must divide hidden_size when head_dim is not given");
  }
  c.head_dim = r.optional_int(root, "head_dim").value_or(c.hidden_size / c.num_heads);
  c.max_position_embeddings = r.optional_int(root, "max_position_embeddings").value_or(4096);
  c.rms_norm_eps = r.optional_number(root, "rms_norm_eps").value_or(c.rms_norm_eps);
  check_activation(r);
  parse_rope(r, c);
  c.tie_word_embeddings = r.flag("tie_word_embeddings", false);
  c.attention_bias = c.arch == ModelArch::qwen2 || r.flag("attention_bias", false);
  c.qk_norm = c.arch == ModelArch::qwen3;
  if (c.arch == ModelArch::mistral || r.flag("use_sliding_window", false)) {
    c.sliding_window = r.optional_int(root, "sliding_window");
  }
  c.dtype = r.text("dtype", r.text("torch_dtype", c.dtype));
  c.bos_token_id = r.optional_int(root, "bos_token_id");
  c.eos_token_ids = r.int_list("eos_token_id");
  check_shapes(r, c);
  return c;
}

void merge_generation_config(std::string_view json_text, std::string_view file,
                             ModelConfig& config) {
  const json root = parse_object(json_text, file);
  const Reader r(root, file);
  for (const std::int64_t id : r.int_list("eos_token_id")) {
    if (std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), id) ==
        config.eos_token_ids.end()) {
      config.eos_token_ids.push_back(id);
    }
  }
  GenerationDefaults& g = config.generation;
  if (r.find(root, "do_sample") != nullptr) g.do_sample = r.flag("do_sample", false);
  g.temperature = r.optional_number(root, "temperature");
  g.top_p = r.optional_number(root, "top_p");
  g.top_k = r.optional_int(root, "top_k");
  g.repetition_penalty = r.optional_number(root, "repetition_penalty");
}

ModelConfig read_hf_model_config(const std::filesystem::path& directory) {
  std::filesystem::path path = directory / "config.json";
  try {
    ModelConfig config = parse_model_config(read_file(path), path.string());
    path = directory / "generation_config.json";
    if (std::filesystem::exists(path))
      merge_generation_config(read_file(path), path.string(), config);
    return config;
  } catch (const FileReadError& error) {
    throw ModelFileError(path.string(), "cannot be read (" + error.reason() + ")");
  }
}

std::vector<TokenId> end_token_ids(const ModelConfig& config) {
  std::vector<TokenId> out;
  for (const std::int64_t id : config.eos_token_ids) out.push_back(static_cast<TokenId>(id));
  return out;
}

}  // namespace baton
