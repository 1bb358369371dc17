#include "baton/server/api/peer_fields.h"

#include "baton/server/api/json_fields.h"
#include "baton/server/api/tool_fields.h"

namespace baton {
namespace {

using nlohmann::json;

// `text` with `from` at its start replaced by `to` (unchanged when it does not start so).
std::string replaced_prefix(const std::string& text, const std::string& from,
                            const std::string& to) {
  return text.starts_with(from) ? to + text.substr(from.size()) : text;
}

// tools[i].function.parameters... -> tools[i]<parameters>..., tools[i].function.X ->
// tools[i].X.
std::string tool_param(const std::string& param, const std::string& parameters) {
  if (!param.starts_with("tools[")) return param;
  const std::size_t close = param.find(']');
  if (close == std::string::npos) return param;
  const std::string head = param.substr(0, close + 1);
  const std::string rest = param.substr(close + 1);
  if (rest.starts_with(".function.parameters")) {
    return head + parameters + rest.substr(std::string(".function.parameters").size());
  }
  return head + replaced_prefix(rest, ".function.", ".");
}

}  // namespace

void refuse_unsupported(const std::string& param, const std::string& why) {
  throw bad_parameter(param, why, "unsupported_parameter");
}

void missing_field(const std::string& param) {
  throw bad_parameter(param, "'" + param + "' is required");
}

ChatTools peer_tools(const nlohmann::ordered_json& tools,
                     const std::function<nlohmann::ordered_json(const nlohmann::ordered_json&,
                                                                const std::string&)>& chat_tool,
                     const std::function<std::string(const std::string&)>& rename) {
  if (!tools.is_array()) throw bad_parameter("tools", "'tools' must be a list");
  nlohmann::ordered_json chat = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    chat.push_back(chat_tool(tools[i], indexed("tools", i)));
  }
  try {
    return checked_tools(chat);
  } catch (const ApiError& error) {
    throw renamed_error(error, rename(error.param().value_or("tools")));
  }
}

std::string indexed(const std::string& where, std::size_t i) {
  return where + "[" + std::to_string(i) + "]";
}

std::string content_text(const json& content, const std::string& where,
                         const std::set<std::string>& allowed, const char* kind) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_parameter(where, "'" + where + "' must be a string or a list of " + kind);
  }
  std::string text;
  for (std::size_t j = 0; j < content.size(); ++j) {
    const std::string part = indexed(where, j);
    const json& p = content[j];
    const json* type = p.is_object() ? json_fields::field(p, "type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      throw bad_parameter(part, "'" + part + "' must be an object with a 'type'");
    }
    if (allowed.count(type->get<std::string>()) == 0) {
      throw bad_parameter(part + ".type",
                          std::string(kind) + " of type '" + type->get<std::string>() +
                              "' are not supported by baton; only text",
                          "unsupported_parameter");
    }
    const json* part_text = json_fields::field(p, "text");
    if (part_text == nullptr)
      throw bad_parameter(part + ".text", "'" + part + ".text' is required");
    text += json_fields::string(*part_text, part + ".text");
  }
  return text;
}

ApiError renamed_error(const ApiError& error, const std::string& param) {
  std::string message = error.what();
  if (error.param() && !error.param()->empty()) {
    // Only where the message quotes the field: a bare word may mean something else.
    const std::string old = "'" + *error.param() + "'";
    const std::string quoted = "'" + param + "'";
    for (std::size_t at = message.find(old); at != std::string::npos;
         at = message.find(old, at + quoted.size())) {
      message.replace(at, old.size(), quoted);
    }
  }
  ApiError out(error.status(), message, error.type(), error.code(), param);
  if (error.retry_after_s()) out.with_retry_after(*error.retry_after_s());
  return out;
}

std::string anthropic_param(const std::string& chat_param) {
  return replaced_prefix(tool_param(chat_param, ".input_schema"), "response_format.json_schema",
                         "output_config.format");
}

std::string responses_param(const std::string& chat_param) {
  std::string param = replaced_prefix(chat_param, "messages", "input");
  return replaced_prefix(tool_param(param, ".parameters"), "response_format.json_schema",
                         "text.format");
}

}  // namespace baton
