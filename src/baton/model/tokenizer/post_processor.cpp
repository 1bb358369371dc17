#include "baton/model/tokenizer/post_processor.h"

#include <limits>
#include <string>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

using nlohmann::json;

[[noreturn]] void fail_post_processor(std::string_view file, const std::string& problem) {
  throw ModelFileError(file, "post_processor: " + problem);
}

// Within TokenId's range; the tokenizer checks it against its vocabulary.
bool is_id(const json& id) {
  return id.is_number_integer() && id.get<std::int64_t>() >= 0 &&
         id.get<std::int64_t>() <= std::numeric_limits<TokenId>::max();
}

// TemplateProcessing's "single": SpecialToken items (their ids from special_tokens) around
// the one Sequence item ("A").
void read_template(const json& node, std::string_view file, PostProcessor& out) {
  const json& single = node.contains("single") ? node["single"] : json();
  if (!single.is_array()) fail_post_processor(file, "TemplateProcessing needs a \"single\" list");
  const json& specials = node.contains("special_tokens") ? node["special_tokens"] : json();
  bool seen_sequence = false;
  for (const json& item : single) {
    if (item.is_object() && item.contains("Sequence")) {
      if (seen_sequence)
        fail_post_processor(file, "TemplateProcessing's \"single\" has two sequences");
      seen_sequence = true;
      continue;
    }
    if (!item.is_object() || !item.contains("SpecialToken") ||
        !item["SpecialToken"].contains("id") || !item["SpecialToken"]["id"].is_string()) {
      fail_post_processor(
          file,
          "a \"single\" item must be {\"Sequence\": ...} or {\"SpecialToken\": {\"id\": ...}}");
    }
    const std::string name = item["SpecialToken"]["id"].get<std::string>();
    if (!specials.is_object() || !specials.contains(name) || !specials[name].contains("ids") ||
        !specials[name]["ids"].is_array()) {
      fail_post_processor(file,
                          "special token '" + name + "' is not in special_tokens with its ids");
    }
    std::vector<TokenId>& side = seen_sequence ? out.after : out.before;
    for (const json& id : specials[name]["ids"]) {
      if (!is_id(id))
        fail_post_processor(file, "special token '" + name + "' has an id that is not a token id");
      side.push_back(id.get<TokenId>());
    }
  }
  if (!seen_sequence)
    fail_post_processor(file, "TemplateProcessing's \"single\" has no {\"Sequence\": ...}");
}

// RobertaProcessing / BertProcessing: "cls": ["<s>", 0] before, "sep": ["</s>", 2] after.
void read_cls_sep(const json& node, std::string_view file, PostProcessor& out) {
  for (const char* key : {"cls", "sep"}) {
    const json& pair = node.contains(key) ? node[key] : json();
    if (!pair.is_array() || pair.size() != 2 || !is_id(pair[1])) {
      fail_post_processor(file, std::string("\"") + key + "\" must be [token, id]");
    }
    (std::string_view(key) == "cls" ? out.before : out.after).push_back(pair[1].get<TokenId>());
  }
}

void read_into(const json& node, std::string_view file, PostProcessor& out) {
  if (node.is_null()) return;
  const json& type_node = node.is_object() && node.contains("type") ? node["type"] : json();
  const std::string type = type_node.is_string() ? type_node.get<std::string>() : "";
  if (type == "TemplateProcessing") {
    read_template(node, file, out);
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    read_cls_sep(node, file, out);
  } else if (type == "Sequence") {
    const json& steps = node.contains("processors") ? node["processors"] : json();
    if (!steps.is_array()) fail_post_processor(file, "Sequence needs a \"processors\" list");
    for (const json& step : steps) read_into(step, file, out);
  } else if (type != "ByteLevel") {
    fail_post_processor(file, "type '" + type +
                                  "' is not supported (TemplateProcessing, RobertaProcessing, "
                                  "BertProcessing, ByteLevel and Sequence are)");
  }
}

}  // namespace

std::vector<TokenId> PostProcessor::apply(std::vector<TokenId> ids) const {
  ids.insert(ids.begin(), before.begin(), before.end());
  ids.insert(ids.end(), after.begin(), after.end());
  return ids;
}

PostProcessor read_post_processor(const json& node, std::string_view file) {
  PostProcessor out;
  read_into(node, file, out);
  return out;
}

}  // namespace baton
