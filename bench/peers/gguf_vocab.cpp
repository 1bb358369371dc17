// tokenizer.json to llama.cpp's "gpt2" or "llama" tokenizer metadata (gguf_vocab.h).
#include "gguf_vocab.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "baton/model/tokenizer/byte_level.h"
#include "baton/model/tokenizer/split_patterns.h"
#include "baton/model/files/model_file_error.h"

namespace baton::peers {
namespace {

using nlohmann::json;

// Every pre-tokenizer step: the object itself, or the steps of a Sequence.
std::vector<json> pre_tokenizer_steps(const json& pre) {
  if (!pre.is_object()) return {};
  if (pre.value("type", "") != "Sequence") return {pre};
  return pre.value("pretokenizers", std::vector<json>{});
}

std::string pre_tokenizer_name(const json& tokenizer, ModelArch arch) {
  bool gpt2_regex = false;
  for (const json& step : pre_tokenizer_steps(tokenizer.value("pre_tokenizer", json()))) {
    const std::string type = step.value("type", "");
    if (type == "Split" && step.contains("pattern")) {
      const std::string pattern = step["pattern"].value("Regex", "");
      if (pattern == kLlama3Pattern) return "llama-bpe";
      if (pattern == kQwen2Pattern) return "qwen2";
    }
    if (type == "ByteLevel" && step.value("use_regex", true)) gpt2_regex = true;
  }
  if (gpt2_regex) return "gpt-2";
  // An unrecognised pattern: the family's usual one.
  return arch == ModelArch::qwen2 || arch == ModelArch::qwen3 ? "qwen2" : "default";
}

std::string merge_text(const json& merge) {
  if (merge.is_string()) return merge.get<std::string>();
  return merge.at(0).get<std::string>() + " " + merge.at(1).get<std::string>();
}

// Places `text` of `type` at `id`, refusing ids beyond the model's embedding rows.
void place(GgufVocab& vocab, std::int64_t id, std::string text, TokenType type,
           const std::string& file) {
  if (id < 0 || static_cast<std::size_t>(id) >= vocab.tokens.size()) {
    throw ModelFileError(file, "token id " + std::to_string(id) + " ('" + text +
                                   "') is outside the model's vocab_size " +
                                   std::to_string(vocab.tokens.size()));
  }
  vocab.tokens[static_cast<std::size_t>(id)] = std::move(text);
  vocab.types[static_cast<std::size_t>(id)] = static_cast<std::int32_t>(type);
}

GgufVocab padded_vocab(const ModelConfig& config) {
  GgufVocab vocab;
  const auto size = static_cast<std::size_t>(config.vocab_size);
  vocab.types.assign(size, static_cast<std::int32_t>(TokenType::unused));
  vocab.tokens.reserve(size);
  for (std::size_t i = 0; i < size; ++i) vocab.tokens.push_back("[PAD" + std::to_string(i) + "]");
  return vocab;
}

GgufVocab byte_symbols_vocab(const ModelConfig& config) {
  GgufVocab vocab = padded_vocab(config);
  vocab.pre = "default";
  const int symbols = static_cast<int>(std::min<std::int64_t>(256, config.vocab_size));
  for (int b = 0; b < symbols; ++b) {
    place(vocab, b, to_byte_level(std::string(1, static_cast<char>(b))), TokenType::normal, "");
  }
  return vocab;
}

// Llama 2's layout: the scores llama.cpp merges by, unknown and byte tokens typed.
void make_sentencepiece(GgufVocab& vocab, const json& model) {
  vocab.model = "llama";
  vocab.merges.clear();
  std::unordered_map<std::string, float> made_by;  // token -> minus its first merge's rank
  const json& merges = model.value("merges", json::array());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string text = merge_text(merges[rank]);
    const std::size_t space = text.find(' ');
    made_by.try_emplace(text.substr(0, space) + text.substr(space + 1), -static_cast<float>(rank));
  }
  const std::string unknown = model.value("unk_token", "");
  vocab.scores.assign(vocab.tokens.size(), 0.0f);
  for (std::size_t id = 0; id < vocab.tokens.size(); ++id) {
    const std::string& token = vocab.tokens[id];
    if (vocab.types[id] != static_cast<std::int32_t>(TokenType::normal)) continue;
    if (token == unknown) {
      vocab.types[id] = static_cast<std::int32_t>(TokenType::unknown);
    } else if (token.size() == 6 && token.starts_with("<0x") && token.ends_with(">")) {
      vocab.types[id] = static_cast<std::int32_t>(TokenType::byte);
    } else {
      const auto made = made_by.find(token);
      vocab.scores[id] = made != made_by.end()
                             ? made->second
                             : -static_cast<float>(merges.size() + id);  // a single character
    }
  }
}

// The template transformers would use: chat_template.jinja, else tokenizer_config.json's
// chat_template when it is one string.
std::string chat_template_of(const std::filesystem::path& directory) {
  const auto text_of = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  if (std::filesystem::exists(directory / "chat_template.jinja")) {
    return text_of(directory / "chat_template.jinja");
  }
  if (!std::filesystem::exists(directory / "tokenizer_config.json")) return "";
  const json config = json::parse(text_of(directory / "tokenizer_config.json"));
  const auto it = config.find("chat_template");
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

GgufVocab read_vocab(const std::filesystem::path& directory, const ModelConfig& config) {
  const std::filesystem::path path = directory / "tokenizer.json";
  if (!std::filesystem::exists(path)) return byte_symbols_vocab(config);
  const std::string file = path.string();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const json tokenizer = json::parse(text.str());
  const json& model = tokenizer.at("model");
  if (model.value("type", "") != "BPE") throw ModelFileError(file, "not a BPE tokenizer");
  GgufVocab vocab = padded_vocab(config);
  vocab.from_tokenizer_json = true;
  vocab.pre = pre_tokenizer_name(tokenizer, config.arch);
  for (const auto& [token, id] : model.at("vocab").items()) {
    place(vocab, id.get<std::int64_t>(), token, TokenType::normal, file);
  }
  for (const json& added : tokenizer.value("added_tokens", json::array())) {
    const TokenType type =
        added.value("special", false) ? TokenType::control : TokenType::user_defined;
    place(vocab, added.at("id").get<std::int64_t>(), added.at("content").get<std::string>(), type,
          file);
  }
  for (const json& merge : model.value("merges", json::array())) {
    vocab.merges.push_back(merge_text(merge));
  }
  if (model.value("byte_fallback", false)) make_sentencepiece(vocab, model);
  vocab.chat_template = chat_template_of(directory);
  return vocab;
}

void add_vocab(GgufFile& file, const GgufVocab& vocab, const ModelConfig& config) {
  file.add_string("tokenizer.ggml.model", vocab.model);
  file.add_strings("tokenizer.ggml.tokens", vocab.tokens);
  file.add_i32s("tokenizer.ggml.token_type", vocab.types);
  if (vocab.model == "llama") {
    file.add_f32s("tokenizer.ggml.scores", vocab.scores);
  } else {
    file.add_string("tokenizer.ggml.pre", vocab.pre);
    file.add_strings("tokenizer.ggml.merges", vocab.merges);
  }
  if (config.bos_token_id) {
    file.add_u32("tokenizer.ggml.bos_token_id", static_cast<std::uint32_t>(*config.bos_token_id));
  }
  if (!config.eos_token_ids.empty()) {
    file.add_u32("tokenizer.ggml.eos_token_id",
                 static_cast<std::uint32_t>(config.eos_token_ids.front()));
  }
  if (!vocab.chat_template.empty()) file.add_string("tokenizer.chat_template", vocab.chat_template);
  // The ids are given to the model directly; nothing is added in front of a prompt.
  file.add_bool("tokenizer.ggml.add_bos_token", false);
}

}  // namespace baton::peers
