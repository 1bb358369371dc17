#include "baton/model/tokenizer/gguf_tokenizer.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/split_patterns.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// llama.cpp's token types (tokenizer.ggml.token_type).
constexpr std::int64_t kControl = 3;
constexpr std::int64_t kUserDefined = 4;

const ordered_json& array_at(const GgufHeader& header, const char* key, const std::string& file) {
  const auto it = header.metadata.find(key);
  if (it == header.metadata.end() || !it->is_array()) {
    throw ModelFileError(file, std::string("GGUF: no array '") + key + "'");
  }
  return *it;
}

// The pre-tokenizer llama.cpp names `pre`, and whether whole-word tokens skip the merges.
std::pair<json, bool> pre_tokenizer(const std::string& pre, const std::string& file) {
  const auto split_then_bytes = [](std::string_view pattern) {
    return json{{"type", "Sequence"},
                {"pretokenizers",
                 {{{"type", "Split"},
                   {"pattern", {{"Regex", pattern}}},
                   {"behavior", "Isolated"},
                   {"invert", false}},
                  {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  };
  if (pre == "llama-bpe" || pre == "llama3") return {split_then_bytes(kLlama3Pattern), true};
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return {split_then_bytes(kQwen2Pattern), false};
  if (pre == "gpt-2" || pre == "default" || pre.empty()) {
    return {{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}, false};
  }
  throw ModelFileError(file, "GGUF: tokenizer.ggml.pre '" + pre +
                                 "' is not known (known: gpt-2, default, llama-bpe, qwen2)");
}

// The id metadata key `key` holds and that token's text; nullopt when either is missing.
std::optional<std::pair<std::int64_t, std::string>> token_of(const GgufHeader& header,
                                                             const std::string& key) {
  const auto tokens = header.metadata.find("tokenizer.ggml.tokens");
  const auto id = header.metadata.find(key);
  if (tokens == header.metadata.end() || !tokens->is_array() || id == header.metadata.end() ||
      !id->is_number_integer() || *id < 0 || *id >= tokens->size()) {
    return std::nullopt;
  }
  const ordered_json& text = (*tokens)[id->get<std::size_t>()];
  if (!text.is_string()) return std::nullopt;
  return std::pair{id->get<std::int64_t>(), text.get<std::string>()};
}

json post_processor(const GgufHeader& header) {
  const auto bos = token_of(header, "tokenizer.ggml.bos_token_id");
  const auto add_bos = header.metadata.find("tokenizer.ggml.add_bos_token");
  if (add_bos == header.metadata.end() || *add_bos != true || !bos) {
    return {{"type", "ByteLevel"}};
  }
  const auto& [id, text] = *bos;
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", text}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"special_tokens", {{text, {{"id", text}, {"ids", {id}}, {"tokens", {text}}}}}}};
}

}  // namespace

json gguf_tokenizer_json(const GgufHeader& header, const std::string& file) {
  const std::string model = header.metadata.value("tokenizer.ggml.model", std::string());
  if (model != "gpt2") {
    throw ModelFileError(file, "GGUF: tokenizer.ggml.model '" + model +
                                   "' is not supported (baton reads \"gpt2\", byte-level BPE; "
                                   "SentencePiece-style \"llama\" vocabularies need the model's "
                                   "tokenizer.json)");
  }
  const ordered_json& tokens = array_at(header, "tokenizer.ggml.tokens", file);
  const auto types_it = header.metadata.find("tokenizer.ggml.token_type");
  const ordered_json types = types_it != header.metadata.end() ? *types_it : ordered_json::array();
  json vocab = json::object();
  json added = json::array();
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (!tokens[id].is_string()) throw ModelFileError(file, "GGUF: a token is not a string");
    vocab[tokens[id].get<std::string>()] = id;
    const std::int64_t type =
        id < types.size() && types[id].is_number_integer() ? types[id].get<std::int64_t>() : 1;
    // Both are matched whole in text; only control tokens are special (skipped on decode).
    if (type == kControl || type == kUserDefined) {
      added.push_back({{"id", id}, {"content", tokens[id]}, {"special", type == kControl}});
    }
  }
  const auto [pre, ignore_merges] =
      pre_tokenizer(header.metadata.value("tokenizer.ggml.pre", std::string()), file);
  return {{"added_tokens", std::move(added)},
          {"normalizer", nullptr},
          {"pre_tokenizer", pre},
          {"post_processor", post_processor(header)},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"},
            {"vocab", std::move(vocab)},
            {"merges", array_at(header, "tokenizer.ggml.merges", file)},
            {"ignore_merges", ignore_merges}}}};
}

json gguf_tokenizer_config(const GgufHeader& header) {
  json config = json::object();
  for (const auto& [name, key] : {std::pair{"bos", "bos_token"},
                                  {"eos", "eos_token"},
                                  {"unknown", "unk_token"},
                                  {"padding", "pad_token"}}) {
    if (const auto token = token_of(header, std::string("tokenizer.ggml.") + name + "_token_id")) {
      config[key] = token->second;
    }
  }
  const auto chat_template = header.metadata.find("tokenizer.chat_template");
  if (chat_template != header.metadata.end() && chat_template->is_string()) {
    config["chat_template"] = *chat_template;
  }
  return config;
}

}  // namespace baton
