#include "baton/model/tokenizer/token_decoder.h"

#include <boost/algorithm/string/replace.hpp>

#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/byte_level.h"

namespace baton {
namespace {

using nlohmann::json;

[[noreturn]] void fail_decoder(std::string_view file, const std::string& problem) {
  throw ModelFileError(file, "decoder: " + problem);
}

// The byte a "<0xNN>" token stands for, or -1.
int fallback_byte(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return -1;
  int value = 0;
  for (const char c : token.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

std::vector<std::string> join_fallback_bytes(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string bytes;
  bool in_bytes = false;
  for (std::string& token : tokens) {
    const int byte = fallback_byte(token);
    if (byte >= 0) {
      bytes.push_back(static_cast<char>(byte));
      in_bytes = true;
      continue;
    }
    if (in_bytes) out.push_back(std::move(bytes));
    bytes.clear();
    in_bytes = false;
    out.push_back(std::move(token));
  }
  if (in_bytes) out.push_back(std::move(bytes));
  return out;
}

// Up to `start` copies of `content` off the front (unless `keep_front`), `stop` off the back.
std::string strip(std::string token, const std::string& content, int start, int stop,
                  bool keep_front) {
  if (content.empty()) return token;
  for (int i = 0; i < stop && token.size() >= content.size() &&
                  token.compare(token.size() - content.size(), content.size(), content) == 0;
       ++i) {
    token.resize(token.size() - content.size());
  }
  std::size_t cut = 0;
  for (int i = 0; !keep_front && i < start && token.compare(cut, content.size(), content) == 0;
       ++i) {
    cut += content.size();
  }
  return token.substr(cut);
}

}  // namespace

TokenDecoder TokenDecoder::read(const json& node, std::string_view file) {
  TokenDecoder decoder;
  if (!node.is_null()) decoder.add(node, file);
  return decoder;
}

void TokenDecoder::add(const json& node, std::string_view file) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) {
    fail_decoder(file, "each decoder must be an object with a \"type\"");
  }
  const std::string type = node["type"].get<std::string>();
  Step step{};
  if (type == "Sequence") {
    if (!node.contains("decoders") || !node["decoders"].is_array()) {
      fail_decoder(file, "Sequence needs a \"decoders\" list");
    }
    for (const json& inner : node["decoders"]) add(inner, file);
    return;
  } else if (type == "Replace") {
    const json& pattern = node.contains("pattern") ? node["pattern"] : json();
    if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string() ||
        pattern["String"].get<std::string>().empty() || !node.contains("content") ||
        !node["content"].is_string()) {
      fail_decoder(file,
                   "Replace needs a non-empty {\"String\": ...} pattern and a string content");
    }
    step.kind = Step::Kind::replace;
    step.from = pattern["String"].get<std::string>();
    step.to = node["content"].get<std::string>();
  } else if (type == "ByteFallback") {
    step.kind = Step::Kind::byte_fallback;
  } else if (type == "Fuse") {
    step.kind = Step::Kind::fuse;
  } else if (type == "Strip") {
    step.kind = Step::Kind::strip;
    step.content = node.value("content", std::string());
    step.start = node.value("start", 0);
    step.stop = node.value("stop", 0);
  } else if (type == "Metaspace") {
    step.kind = Step::Kind::metaspace;
    step.metaspace = Metaspace::read(node, file);
  } else if (type == "ByteLevel") {
    step.kind = Step::Kind::byte_level;
  } else {
    fail_decoder(file, "'" + type + "' is not supported (Replace, ByteFallback, Fuse, Strip, " +
                           "Metaspace, ByteLevel and Sequence are)");
  }
  steps_.push_back(std::move(step));
}

std::string TokenDecoder::decode(std::vector<std::string> tokens, bool continuation) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Step::Kind::byte_fallback:
        tokens = join_fallback_bytes(std::move(tokens));
        break;
      case Step::Kind::fuse: {
        std::string all;
        for (const std::string& token : tokens) all += token;
        tokens = {std::move(all)};
        break;
      }
      default:
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          const bool opens = i == 0 && !continuation;
          std::string& token = tokens[i];
          if (step.kind == Step::Kind::replace)
            boost::algorithm::replace_all(token, step.from, step.to);
          if (step.kind == Step::Kind::strip) {
            token = strip(std::move(token), step.content, step.start, step.stop, !opens && i == 0);
          }
          if (step.kind == Step::Kind::metaspace) token = step.metaspace.decode(token, opens);
          if (step.kind == Step::Kind::byte_level) {
            if (auto bytes = from_byte_level(token)) token = std::move(*bytes);
          }
        }
    }
  }
  std::string text;
  for (const std::string& token : tokens) text += token;
  return text;
}

}  // namespace baton
