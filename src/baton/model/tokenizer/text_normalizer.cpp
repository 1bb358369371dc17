#include "baton/model/tokenizer/text_normalizer.h"

#include <boost/algorithm/string/replace.hpp>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using nlohmann::json;

[[noreturn]] void fail_normalizer(std::string_view file, const std::string& problem) {
  throw ModelFileError(file, "normalizer: " + problem);
}

std::string string_member(const json& node, const char* key, std::string_view file,
                          const std::string& type) {
  if (!node.contains(key) || !node[key].is_string()) {
    fail_normalizer(file, type + " needs a string \"" + key + "\"");
  }
  return node[key].get<std::string>();
}

}  // namespace

TextNormalizer TextNormalizer::read(const json& node, std::string_view file) {
  TextNormalizer normalizer;
  if (!node.is_null()) normalizer.add(node, file);
  return normalizer;
}

void TextNormalizer::add(const json& node, std::string_view file) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) {
    fail_normalizer(file, "each normalizer must be an object with a \"type\"");
  }
  const std::string type = node["type"].get<std::string>();
  if (type == "Sequence") {
    if (!node.contains("normalizers") || !node["normalizers"].is_array()) {
      fail_normalizer(file, "Sequence needs a \"normalizers\" list");
    }
    for (const json& step : node["normalizers"]) add(step, file);
  } else if (type == "Prepend") {
    steps_.push_back({Step::Kind::prepend, "", string_member(node, "prepend", file, type)});
  } else if (type == "Replace") {
    const json& pattern = node.contains("pattern") ? node["pattern"] : json();
    if (!pattern.is_object() || !pattern.contains("String") || !pattern["String"].is_string()) {
      fail_normalizer(file, "Replace is supported with a {\"String\": ...} pattern only");
    }
    const std::string from = pattern["String"].get<std::string>();
    if (from.empty()) fail_normalizer(file, "Replace's pattern must not be empty");
    steps_.push_back({Step::Kind::replace, from, string_member(node, "content", file, type)});
  } else if (type != "NFC") {
    fail_normalizer(file,
                    "'" + type + "' is not supported (Prepend, Replace, NFC and Sequence are)");
  }
}

std::string TextNormalizer::apply(std::string_view text) const {
  std::string out(text);
  for (const Step& step : steps_) {
    // As the tokenizers library: nothing is put before an empty text.
    if (step.kind == Step::Kind::prepend) {
      if (!out.empty()) out.insert(0, step.to);
      continue;
    }
    boost::algorithm::replace_all(out, step.from, step.to);
  }
  return out;
}

}  // namespace baton
