#include "baton/model/tokenizer/metaspace.h"

#include <boost/algorithm/string/replace.hpp>

#include "baton/model/files/model_file_error.h"

namespace baton {

Metaspace Metaspace::read(const nlohmann::json& node, std::string_view file) {
  Metaspace metaspace;
  if (node.contains("replacement")) {
    if (!node["replacement"].is_string() || node["replacement"].get<std::string>().empty()) {
      throw ModelFileError(file, "Metaspace: \"replacement\" must be a non-empty string");
    }
    metaspace.replacement = node["replacement"].get<std::string>();
  }
  if (node.contains("prepend_scheme")) {
    const nlohmann::json& scheme = node["prepend_scheme"];
    if (scheme == "always") {
      metaspace.prepend = Prepend::always;
    } else if (scheme == "first") {
      metaspace.prepend = Prepend::first;
    } else if (scheme == "never") {
      metaspace.prepend = Prepend::never;
    } else {
      throw ModelFileError(file, "Metaspace: \"prepend_scheme\" must be always, first or never");
    }
  } else if (node.contains("add_prefix_space") && node["add_prefix_space"].is_boolean()) {
    metaspace.prepend = node["add_prefix_space"].get<bool>() ? Prepend::always : Prepend::never;
  }
  if (node.contains("split") && node["split"].is_boolean()) {
    metaspace.split = node["split"].get<bool>();
  }
  return metaspace;
}

std::vector<std::string> Metaspace::pre_tokenize(std::string_view text, bool opens_text) const {
  std::string replaced = boost::algorithm::replace_all_copy(std::string(text), " ", replacement);
  const bool prepend_here = prepend == Prepend::always || (prepend == Prepend::first && opens_text);
  if (prepend_here && replaced.compare(0, replacement.size(), replacement) != 0) {
    replaced.insert(0, replacement);
  }
  if (!split) return {replaced};
  // Each piece begins at a replacement (it goes with the word after it).
  std::vector<std::string> pieces;
  std::size_t start = 0;
  for (std::size_t found = replaced.find(replacement, 1); found != std::string::npos;
       found = replaced.find(replacement, found + replacement.size())) {
    if (found > start) pieces.push_back(replaced.substr(start, found - start));
    start = found;
  }
  if (start < replaced.size()) pieces.push_back(replaced.substr(start));
  return pieces;
}

std::string Metaspace::decode(std::string_view token, bool first) const {
  std::string text(token);
  boost::algorithm::replace_all(text, replacement, " ");
  if (first && prepend != Prepend::never && !text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

}  // namespace baton
