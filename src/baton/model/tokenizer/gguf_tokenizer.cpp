#include "baton/model/tokenizer/gguf_tokenizer.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/split_patterns.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// llama.cpp's token types (tokenizer.ggml.token_type).
constexpr std::int64_t kNormal = 1;
constexpr std::int64_t kControl = 3;
constexpr std::int64_t kUserDefined = 4;

constexpr const char* kMetaspace = "\u2581";  // ▁, SentencePiece's space

const ordered_json& array_at(const GgufHeader& header, const char* key, const std::string& file) {
  const auto it = header.metadata.find(key);
  if (it == header.metadata.end() || !it->is_array()) {
    throw ModelFileError(file, std::string("GGUF: no array '") + key + "'");
  }
  return *it;
}

ordered_json optional_array(const GgufHeader& header, const char* key) {
  const auto it = header.metadata.find(key);
  return it != header.metadata.end() && it->is_array() ? *it : ordered_json::array();
}

// A token's type; normal where the file gives none.
std::int64_t type_of(const ordered_json& types, std::size_t id) {
  return id < types.size() && types[id].is_number_integer() ? types[id].get<std::int64_t>()
                                                             : kNormal;
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

// The vocabulary as tokenizer.json's model.vocab, and its control and user-defined tokens
// as added tokens: both are matched whole in text; only control tokens are special
// (skipped on decode).
std::pair<json, json> vocab_and_added(const ordered_json& tokens, const ordered_json& types,
                                      const std::string& file) {
  json vocab = json::object();
  json added = json::array();
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (!tokens[id].is_string()) throw ModelFileError(file, "GGUF: a token is not a string");
    vocab[tokens[id].get<std::string>()] = id;
    const std::int64_t type = type_of(types, id);
    if (type == kControl || type == kUserDefined) {
      added.push_back({{"id", id}, {"content", tokens[id]}, {"special", type == kControl}});
    }
  }
  return {std::move(vocab), std::move(added)};
}

json byte_level_bpe(const GgufHeader& header, const std::string& file) {
  const ordered_json& tokens = array_at(header, "tokenizer.ggml.tokens", file);
  auto [vocab, added] = vocab_and_added(tokens, optional_array(header, "tokenizer.ggml.token_type"),
                                        file);
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

// llama.cpp's SentencePiece tokenizer merges the adjacent pair whose concatenation is the
// highest-scored token of the vocabulary. As BPE merges: every split of every normal token
// into two tokens, ranked by the whole token's score (ties: the lower id first).
json merges_from_scores(const ordered_json& tokens, const ordered_json& types,
                        const ordered_json& scores, const std::string& file) {
  std::unordered_map<std::string_view, std::size_t> id_of;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    id_of.emplace(tokens[id].get_ref<const std::string&>(), id);
  }
  struct Merge {
    float score;
    std::size_t id;
    std::size_t split;
  };
  std::vector<Merge> found;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (type_of(types, id) != kNormal) continue;
    const std::string_view text = tokens[id].get_ref<const std::string&>();
    for (std::size_t split = 1; split < text.size(); ++split) {
      if ((static_cast<unsigned char>(text[split]) & 0xC0) == 0x80) continue;  // inside a char
      if (id_of.contains(text.substr(0, split)) && id_of.contains(text.substr(split))) {
        if (id >= scores.size() || !scores[id].is_number()) {
          throw ModelFileError(file, "GGUF: tokenizer.ggml.scores has no score for token " +
                                         std::to_string(id));
        }
        found.push_back({.score = scores[id].get<float>(), .id = id, .split = split});
      }
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Merge& a, const Merge& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  });
  json merges = json::array();
  for (const Merge& m : found) {
    const std::string& text = tokens[m.id].get_ref<const std::string&>();
    merges.push_back({text.substr(0, m.split), text.substr(m.split)});
  }
  return merges;
}

// llama.cpp's "llama" tokenizer model as the tokenizer.json transformers writes for the
// same SentencePiece model (legacy layout): " " -> "▁" with a "▁" in front when
// tokenizer.ggml.add_space_prefix says so (default), byte fallback, and the decoder back.
json sentencepiece_bpe(const GgufHeader& header, const std::string& file) {
  const ordered_json& tokens = array_at(header, "tokenizer.ggml.tokens", file);
  const ordered_json types = optional_array(header, "tokenizer.ggml.token_type");
  auto [vocab, added] = vocab_and_added(tokens, types, file);
  json merges = merges_from_scores(tokens, types, array_at(header, "tokenizer.ggml.scores", file),
                                   file);
  const bool space_prefix = header.metadata.value("tokenizer.ggml.add_space_prefix", true);
  const json replace_space = {
      {"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMetaspace}};
  json normalizer = {{"type", "Sequence"}, {"normalizers", json::array()}};
  if (space_prefix) normalizer["normalizers"].push_back({{"type", "Prepend"}, {"prepend", kMetaspace}});
  normalizer["normalizers"].push_back(replace_space);
  json decoder = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", kMetaspace}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}}}}};
  if (space_prefix) {
    decoder["decoders"].push_back(
        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  }
  json model = {{"type", "BPE"},
                {"vocab", std::move(vocab)},
                {"merges", std::move(merges)},
                {"byte_fallback", true},
                {"fuse_unk", true}};
  if (const auto unknown = token_of(header, "tokenizer.ggml.unknown_token_id")) {
    model["unk_token"] = unknown->second;
  }
  return {{"added_tokens", std::move(added)},
          {"normalizer", std::move(normalizer)},
          {"pre_tokenizer", nullptr},
          {"post_processor", post_processor(header)},
          {"decoder", std::move(decoder)},
          {"model", std::move(model)}};
}

}  // namespace

json gguf_tokenizer_json(const GgufHeader& header, const std::string& file) {
  const std::string model = header.metadata.value("tokenizer.ggml.model", std::string());
  if (model == "gpt2") return byte_level_bpe(header, file);
  if (model == "llama") return sentencepiece_bpe(header, file);
  throw ModelFileError(file, "GGUF: tokenizer.ggml.model '" + model +
                                 "' is not supported (baton reads \"gpt2\", byte-level BPE, and "
                                 "\"llama\", SentencePiece BPE)");
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
