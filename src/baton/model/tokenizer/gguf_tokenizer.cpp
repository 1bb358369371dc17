#include "baton/model/tokenizer/gguf_tokenizer.h"

#include <nlohmann/json.hpp>
#include <string_view>

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

json post_processor(const GgufHeader& header, const json& tokens) {
  const auto add_bos = header.metadata.find("tokenizer.ggml.add_bos_token");
  const auto bos = header.metadata.find("tokenizer.ggml.bos_token_id");
  if (add_bos == header.metadata.end() || *add_bos != true || bos == header.metadata.end() ||
      !bos->is_number_integer() || *bos < 0 || *bos >= tokens.size()) {
    return {{"type", "ByteLevel"}};
  }
  const json text = tokens[bos->get<std::size_t>()];
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", text}, {"type_id", 0}}}},
            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"special_tokens",
           {{text.get<std::string>(), {{"id", text}, {"ids", {*bos}}, {"tokens", {text}}}}}}};
}

}  // namespace

std::string gguf_tokenizer_json(const GgufHeader& header, const std::string& file) {
  const std::string model = header.metadata.value("tokenizer.ggml.model", std::string());
  if (model != "gpt2") {
    throw ModelFileError(file, "GGUF: tokenizer.ggml.model '" + model +
                                   "' is not supported (baton reads \"gpt2\", byte-level BPE; "
                                   "SentencePiece-style \"llama\" vocabularies need the model's "
                                   "tokenizer.json)");
  }
  const json tokens = array_at(header, "tokenizer.ggml.tokens", file);
  const json merges = array_at(header, "tokenizer.ggml.merges", file);
  const auto types_it = header.metadata.find("tokenizer.ggml.token_type");
  const json types = types_it != header.metadata.end() ? json(*types_it) : json::array();
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
  const json tokenizer = {
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", pre},
      {"post_processor", post_processor(header, tokens)},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", ignore_merges}}}};
  return tokenizer.dump();
}

nlohmann::json gguf_tokenizer_config(const GgufHeader& header) {
  json config = json::object();
  const auto tokens = header.metadata.find("tokenizer.ggml.tokens");
  for (const char* name : {"bos", "eos", "unknown", "padding"}) {
    const auto id = header.metadata.find(std::string("tokenizer.ggml.") + name + "_token_id");
    if (tokens == header.metadata.end() || !tokens->is_array() || id == header.metadata.end() ||
        !id->is_number_integer() || *id < 0 || *id >= tokens->size()) {
      continue;
    }
    const std::string_view key = name == std::string_view("unknown")   ? "unk_token"
                                 : name == std::string_view("padding") ? "pad_token"
                                                                       : "";
    config[key.empty() ? std::string(name) + "_token" : std::string(key)] =
        (*tokens)[id->get<std::size_t>()];
  }
  const auto chat_template = header.metadata.find("tokenizer.chat_template");
  if (chat_template != header.metadata.end() && chat_template->is_string()) {
    config["chat_template"] = *chat_template;
  }
  return config;
}

}  // namespace baton
