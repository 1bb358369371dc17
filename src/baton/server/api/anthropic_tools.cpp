#include "baton/server/api/anthropic_tools.h"

#include <map>

#include "baton/model/chat/chat_tools.h"
#include "baton/server/api/json_fields.h"
#include "baton/server/api/peer_fields.h"
#include "baton/server/api/tool_fields.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace json_fields;

// One Anthropic tool as OpenAI's {"type": "function", "function": {name, description,
// parameters}}, checked afterwards by checked_tools.
ordered_json chat_tool(const ordered_json& tool, const std::string& where) {
  if (!tool.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
  const auto type = tool.find("type");
  if (type != tool.end() && !type->is_null() && *type != "custom") {
    refuse_unsupported(where + ".type",
                       "'" + where + ".type' is " + type->dump() +
                           ": server tools are not supported by baton; only client tools "
                           "with an input_schema");
  }
  const auto schema = tool.find("input_schema");
  if (schema == tool.end() || schema->is_null()) missing_field(where + ".input_schema");
  ordered_json function = ordered_json::object();
  for (const char* key : {"name", "description"}) {
    if (const auto value = tool.find(key); value != tool.end()) function[key] = *value;
  }
  function["parameters"] = *schema;
  return {{"type", "function"}, {"function", std::move(function)}};
}

ChatTools anthropic_tools(const ordered_json& tools) {
  return peer_tools(tools, chat_tool, anthropic_param);
}

void read_choice(const json& value, ToolUse& use) {
  const json* type = value.is_object() ? field(value, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    throw bad_parameter("tool_choice",
                        "'tool_choice' must be an object with a 'type': auto, any, tool or none");
  }
  const std::string t = type->get<std::string>();
  if (t == "auto") {
    use.choice = ToolUse::Choice::automatic;
  } else if (t == "any") {
    use.choice = ToolUse::Choice::required;
  } else if (t == "none") {
    use.choice = ToolUse::Choice::none;
  } else if (t == "tool") {
    const json* name = field(value, "name");
    if (name == nullptr) missing_field("tool_choice.name");
    use.choice = ToolUse::Choice::named;
    use.function = string(*name, "tool_choice.name");
  } else {
    throw bad_parameter("tool_choice.type",
                        "'tool_choice.type' must be 'auto', 'any', 'tool' or 'none'");
  }
  if (const json* off = field(value, "disable_parallel_tool_use")) {
    use.parallel = !boolean(*off, "tool_choice.disable_parallel_tool_use");
  }
  if (use.tools.empty() &&
      (use.choice == ToolUse::Choice::required || use.choice == ToolUse::Choice::named)) {
    throw bad_parameter("tool_choice", "'tool_choice' of type '" + t + "' needs 'tools'");
  }
  if (use.choice == ToolUse::Choice::named) {
    try {
      check_tool_choice(use.tools, use.function, "tool_choice.name");
    } catch (const std::invalid_argument& e) {
      throw bad_parameter("tool_choice.name", e.what());
    }
  }
}

// A block's type, which every block has.
std::string block_type(const json& block, const std::string& where) {
  const json* type = block.is_object() ? field(block, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    throw bad_parameter(where, "'" + where + "' must be an object with a 'type'");
  }
  return type->get<std::string>();
}

[[noreturn]] void refuse_block(const std::string& where, const std::string& type,
                               const char* allowed) {
  refuse_unsupported(where + ".type", "content blocks of type '" + type +
                                          "' are not supported by baton here; only " + allowed);
}

// The calls made so far in the conversation: id -> function name.
using Calls = std::map<std::string, std::string>;

ChatMessage tool_result(const json& block, const std::string& where, const Calls& calls) {
  const json* id = field(block, "tool_use_id");
  if (id == nullptr) missing_field(where + ".tool_use_id");
  const std::string call_id = string(*id, where + ".tool_use_id");
  const auto call = calls.find(call_id);
  if (call == calls.end()) {
    throw bad_parameter(where + ".tool_use_id",
                        "'" + where + ".tool_use_id' is '" + call_id +
                            "', which no earlier assistant message's tool_use block has");
  }
  std::string content;
  if (const json* c = field(block, "content")) {
    content = content_text(*c, where + ".content", {"text"}, "tool_result content blocks");
  }
  if (const json* error = field(block, "is_error")) {
    // The model is told the call failed, as the error flag would tell it.
    if (boolean(*error, where + ".is_error")) content = "Error: " + content;
  }
  return {.role = "tool", .content = content, .tool_call_id = call_id, .name = call->second};
}

void append_user(const json& blocks, const std::string& where, const Calls& calls,
                 std::vector<ChatMessage>& out) {
  std::string text;
  bool results = false;
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const std::string at = indexed(where, j);
    const std::string type = block_type(blocks[j], at);
    if (type == "text") {
      const json* t = field(blocks[j], "text");
      if (t == nullptr) missing_field(at + ".text");
      text += string(*t, at + ".text");
    } else if (type == "tool_result") {
      out.push_back(tool_result(blocks[j], at, calls));
      results = true;
    } else {
      refuse_block(at, type, "text and tool_result");
    }
  }
  if (!text.empty() || !results) out.push_back({.role = "user", .content = text});
}

ChatMessage assistant_turn(const json& blocks, const ordered_json& ordered,
                           const std::string& where, Calls& calls) {
  ChatMessage message{.role = "assistant", .content = ""};
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const std::string at = indexed(where, j);
    const json& block = blocks[j];
    const std::string type = block_type(block, at);
    if (type == "text") {
      const json* t = field(block, "text");
      if (t == nullptr) missing_field(at + ".text");
      message.content += string(*t, at + ".text");
      continue;
    }
    if (type != "tool_use") refuse_block(at, type, "text and tool_use");
    const json* id = field(block, "id");
    const json* name = field(block, "name");
    const json* input = field(block, "input");
    if (id == nullptr) missing_field(at + ".id");
    if (name == nullptr) missing_field(at + ".name");
    if (input == nullptr) missing_field(at + ".input");
    if (!input->is_object()) {
      throw bad_parameter(at + ".input", "'" + at + ".input' must be an object");
    }
    ToolCall call{.id = string(*id, at + ".id"),
                  .name = string(*name, at + ".name"),
                  .arguments = ordered[j]["input"].dump()};
    calls[call.id] = call.name;
    message.tool_calls.push_back(std::move(call));
  }
  return message;
}

}  // namespace

ToolUse anthropic_tool_use(const json& object, std::string_view body) {
  ToolUse use;
  if (field(object, "tools") != nullptr) use.tools = anthropic_tools(ordered_field(body, "tools"));
  if (const json* choice = field(object, "tool_choice")) read_choice(*choice, use);
  return use;
}

void append_anthropic_turns(const json& messages, const ordered_json& ordered,
                            std::vector<ChatMessage>& out) {
  Calls calls;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string where = indexed("messages", i);
    const json& m = messages[i];
    if (!m.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
    const json* role = field(m, "role");
    if (role == nullptr) missing_field(where + ".role");
    const std::string r = string(*role, where + ".role");
    if (r != "user" && r != "assistant") {
      throw bad_parameter(where + ".role", "'" + where + ".role' must be 'user' or 'assistant'");
    }
    const json* content = field(m, "content");
    if (content == nullptr) missing_field(where + ".content");
    const std::string at = where + ".content";
    if (!content->is_array()) {
      out.push_back({.role = r, .content = content_text(*content, at, {"text"}, "content blocks")});
    } else if (r == "user") {
      append_user(*content, at, calls, out);
    } else {
      out.push_back(assistant_turn(*content, ordered[i]["content"], at, calls));
    }
  }
}

ResponseFormat anthropic_output_format(const json& object, std::string_view body) {
  const json* config = field(object, "output_config");
  if (config == nullptr) return {};
  if (!config->is_object()) {
    throw bad_parameter("output_config", "'output_config' must be an object");
  }
  for (const auto& [key, value] : config->items()) {
    if (value.is_null()) continue;
    if (key == "effort")
      refuse_unsupported("output_config.effort", "'output_config.effort' is not supported");
    if (key != "format") {
      throw bad_parameter("output_config." + key, "unknown field 'output_config." + key + "'",
                          "unknown_parameter");
    }
  }
  const json* format = field(*config, "format");
  if (format == nullptr) return {};
  const json* type = format->is_object() ? field(*format, "type") : nullptr;
  if (type == nullptr || *type != "json_schema") {
    throw bad_parameter("output_config.format.type",
                        "'output_config.format.type' must be 'json_schema'");
  }
  const ordered_json schema = ordered_field(body, "output_config")["format"]["schema"];
  const ordered_json chat = {{"type", "json_schema"},
                             {"json_schema", {{"name", "output"}, {"schema", schema}}}};
  try {
    return read_response_format(chat);
  } catch (const ApiError& error) {
    throw renamed_error(error, anthropic_param(error.param().value_or("response_format")));
  }
}

}  // namespace baton
