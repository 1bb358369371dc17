#include "baton/server/api/tool_fields.h"

#include <set>
#include <stdexcept>

#include "baton/server/api/json_fields.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// chat_tools' messages open with the field in quotes: 'tools[2].function.name' ...
std::string quoted_field(const std::string& message, const std::string& fallback) {
  const std::size_t open = message.find('\'');
  const std::size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
  if (close == std::string::npos) return fallback;
  return message.substr(open + 1, close - open - 1);
}

std::string renamed(std::string field, const std::string& param) {
  if (field.starts_with("tools")) field = param + field.substr(5);
  return field;
}

}  // namespace

ordered_json ordered_field(std::string_view body, const char* name) {
  const ordered_json object = ordered_json::parse(body, nullptr, false);
  if (!object.is_object()) return nullptr;
  const auto found = object.find(name);
  return found == object.end() ? ordered_json() : *found;
}

ChatTools checked_tools(const ordered_json& tools, const std::string& param) {
  try {
    return tools_from_json(tools);
  } catch (const std::invalid_argument& e) {
    const std::string field = renamed(quoted_field(e.what(), "tools"), param);
    std::string message = e.what();
    if (param != "tools") message = "'" + field + message.substr(message.find('\'', 1));
    throw bad_parameter(field, message);
  }
}

void read_tool_choice(const json& value, ToolUse& tool_use) {
  if (value.is_string()) {
    const std::string choice = value.get<std::string>();
    if (choice == "auto") {
      tool_use.choice = ToolUse::Choice::automatic;
    } else if (choice == "none") {
      tool_use.choice = ToolUse::Choice::none;
    } else if (choice == "required") {
      tool_use.choice = ToolUse::Choice::required;
    } else {
      throw bad_parameter("tool_choice",
                          "'tool_choice' must be 'auto', 'none', 'required' or a function");
    }
  } else {
    const json* type = value.is_object() ? json_fields::field(value, "type") : nullptr;
    const json* function = value.is_object() ? json_fields::field(value, "function") : nullptr;
    const json* name = function != nullptr && function->is_object()
                           ? json_fields::field(*function, "name")
                           : nullptr;
    if (type == nullptr || *type != "function" || name == nullptr) {
      throw bad_parameter("tool_choice",
                          "'tool_choice' must be 'auto', 'none', 'required' or {\"type\": "
                          "\"function\", \"function\": {\"name\": ...}}");
    }
    tool_use.choice = ToolUse::Choice::named;
    tool_use.function = json_fields::string(*name, "tool_choice.function.name");
  }
  if (tool_use.tools.empty() && tool_use.choice != ToolUse::Choice::none &&
      tool_use.choice != ToolUse::Choice::automatic) {
    throw bad_parameter("tool_choice", "'tool_choice' needs 'tools'");
  }
  if (tool_use.choice == ToolUse::Choice::named) {
    try {
      check_tool_choice(tool_use.tools, tool_use.function, "tool_choice.function.name");
    } catch (const std::invalid_argument& e) {
      throw bad_parameter("tool_choice.function.name", e.what());
    }
  }
}

void check_tool_results(const std::vector<ChatMessage>& messages,
                        const std::string& messages_param) {
  std::set<std::string> called;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    for (const ToolCall& call : m.tool_calls) called.insert(call.id);
    if (m.role != "tool" || m.tool_call_id.empty() || called.contains(m.tool_call_id)) continue;
    const std::string where = messages_param + "[" + std::to_string(i) + "].tool_call_id";
    throw bad_parameter(where, "'" + where + "' is '" + m.tool_call_id +
                                   "', which no earlier assistant message's tool_calls has");
  }
}

ResponseFormat read_response_format(const ordered_json& value, const std::string& param) {
  const auto type = value.is_object() ? value.find("type") : value.end();
  if (type == value.end() || !type->is_string()) {
    throw bad_parameter(param, "'" + param + "' must be an object with a 'type'");
  }
  const std::string kind = type->get<std::string>();
  if (kind == "text") return {};
  if (kind == "json_object") return {.kind = ResponseFormat::Kind::json_object};
  if (kind != "json_schema") {
    throw bad_parameter(param + ".type", "'" + param +
                                             ".type' must be 'text', 'json_object' or "
                                             "'json_schema'");
  }
  const auto spec = value.find("json_schema");
  if (spec == value.end() || !spec->is_object()) {
    throw bad_parameter(param + ".json_schema", "'" + param + ".json_schema' must be an object");
  }
  const auto schema = spec->find("schema");
  if (schema == spec->end() || !schema->is_object()) {
    throw bad_parameter(param + ".json_schema.schema",
                        "'" + param + ".json_schema.schema' must be a JSON Schema object");
  }
  const auto name = spec->find("name");
  if (name != spec->end() && !name->is_string()) {
    throw bad_parameter(param + ".json_schema.name",
                        "'" + param + ".json_schema.name' must be a string");
  }
  const auto strict = spec->find("strict");
  if (strict != spec->end() && !strict->is_null() && !strict->is_boolean()) {
    throw bad_parameter(param + ".json_schema.strict",
                        "'" + param + ".json_schema.strict' must be a boolean");
  }
  return {.kind = ResponseFormat::Kind::json_schema,
          .schema = *schema,
          .name = name == spec->end() ? std::string() : name->get<std::string>()};
}

}  // namespace baton
