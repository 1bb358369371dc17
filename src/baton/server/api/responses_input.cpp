#include "baton/server/api/responses_input.h"

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

const json& required_field(const json& item, const std::string& where, const char* name) {
  const json* value = field(item, name);
  if (value == nullptr) missing_field(where + "." + name);
  return *value;
}

ChatMessage message_item(const json& item, const std::string& where) {
  std::string r = string(required_field(item, where, "role"), where + ".role");
  if (r == "developer") r = "system";
  if (r != "system" && r != "user" && r != "assistant") {
    throw bad_parameter(where + ".role", "'" + where +
                                             ".role' must be user, assistant, system "
                                             "or developer");
  }
  return {.role = r,
          .content = content_text(required_field(item, where, "content"), where + ".content",
                                  {"input_text", "output_text"}, "content parts")};
}

// The calls made so far in the conversation: call_id -> function name.
using Calls = std::map<std::string, std::string>;

void append_call(const json& item, const std::string& where, Calls& calls,
                 std::vector<ChatMessage>& out) {
  ToolCall call{
      .id = string(required_field(item, where, "call_id"), where + ".call_id"),
      .name = string(required_field(item, where, "name"), where + ".name"),
      .arguments = string(required_field(item, where, "arguments"), where + ".arguments")};
  calls[call.id] = call.name;
  // A call follows the assistant's text or its other calls: one assistant message, as in
  // Chat Completions.
  if (out.empty() || out.back().role != "assistant") {
    out.push_back({.role = "assistant", .content = ""});
  }
  out.back().tool_calls.push_back(std::move(call));
}

ChatMessage call_output(const json& item, const std::string& where, const Calls& calls) {
  const std::string id = string(required_field(item, where, "call_id"), where + ".call_id");
  const auto call = calls.find(id);
  if (call == calls.end()) {
    throw bad_parameter(where + ".call_id", "'" + where + ".call_id' is '" + id +
                                                "', which no earlier function_call item has");
  }
  return {.role = "tool",
          .content = content_text(required_field(item, where, "output"), where + ".output",
                                  {"input_text"}, "output parts"),
          .tool_call_id = id,
          .name = call->second};
}

ordered_json chat_tool(const ordered_json& tool, const std::string& where) {
  if (!tool.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
  const auto type = tool.find("type");
  if (type == tool.end() || type->is_null()) missing_field(where + ".type");
  if (*type != "function") {
    refuse_unsupported(where + ".type", "tools of type " + type->dump() +
                                            " are not supported by baton; only 'function' tools");
  }
  ordered_json function = ordered_json::object();
  for (const char* key : {"name", "description", "parameters", "strict"}) {
    const auto value = tool.find(key);
    if (value != tool.end() && !value->is_null()) function[key] = *value;
  }
  return {{"type", "function"}, {"function", std::move(function)}};
}

ChatTools responses_tools(const ordered_json& tools) {
  return peer_tools(tools, chat_tool, responses_param);
}

// "auto", "none", "required" or {"type": "function", "name": N}, read as Chat Completions'.
void read_choice(const json& value, ToolUse& use) {
  if (value.is_string()) return read_tool_choice(value, use);
  const json* type = value.is_object() ? field(value, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    throw bad_parameter("tool_choice",
                        "'tool_choice' must be 'auto', 'none', 'required' or "
                        "{\"type\": \"function\", \"name\": ...}");
  }
  if (*type != "function") {
    refuse_unsupported("tool_choice.type", "'tool_choice' of type '" + type->get<std::string>() +
                                               "' is not supported by baton; only functions");
  }
  const std::string where = "tool_choice";
  const json& name = required_field(value, where, "name");
  try {
    read_tool_choice({{"type", "function"}, {"function", {{"name", name}}}}, use);
  } catch (const ApiError& error) {
    const std::string param = error.param().value_or("tool_choice");
    throw renamed_error(error, param == "tool_choice.function.name" ? "tool_choice.name" : param);
  }
}

}  // namespace

void append_response_items(const json& input, std::vector<ChatMessage>& out) {
  Calls calls;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const std::string where = indexed("input", i);
    const json& item = input[i];
    if (!item.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
    const json* type = field(item, "type");
    const std::string t = type == nullptr ? "message" : string(*type, where + ".type");
    if (t == "message") {
      out.push_back(message_item(item, where));
    } else if (t == "function_call") {
      append_call(item, where, calls, out);
    } else if (t == "function_call_output") {
      out.push_back(call_output(item, where, calls));
    } else {
      refuse_unsupported(where + ".type", "input items of type '" + t +
                                              "' are not supported by baton; only message, "
                                              "function_call and function_call_output");
    }
  }
}

ToolUse responses_tool_use(const json& object, std::string_view body) {
  ToolUse use;
  if (field(object, "tools") != nullptr) use.tools = responses_tools(ordered_field(body, "tools"));
  if (const json* choice = field(object, "tool_choice")) read_choice(*choice, use);
  if (const json* parallel = field(object, "parallel_tool_calls")) {
    use.parallel = boolean(*parallel, "parallel_tool_calls");
  }
  return use;
}

ResponseFormat responses_text_format(const json& object, std::string_view body) {
  const json* text = field(object, "text");
  if (text == nullptr) return {};
  if (!text->is_object()) throw bad_parameter("text", "'text' must be an object");
  const json* format = field(*text, "format");
  if (format == nullptr) return {};
  const json* type = format->is_object() ? field(*format, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    throw bad_parameter("text.format", "'text.format' must be an object with a 'type'");
  }
  if (*type == "text") return {};
  if (*type == "json_object") return {.kind = ResponseFormat::Kind::json_object};
  if (*type != "json_schema") {
    refuse_unsupported("text.format.type",
                       "'text.format.type' must be 'text', 'json_object' or 'json_schema'");
  }
  // Chat Completions' shape of the same: {"type": "json_schema", "json_schema": {...}}.
  ordered_json spec = ordered_field(body, "text")["format"];
  spec.erase("type");
  const ordered_json chat = {{"type", "json_schema"}, {"json_schema", std::move(spec)}};
  try {
    return read_response_format(chat);
  } catch (const ApiError& error) {
    throw renamed_error(error, responses_param(error.param().value_or("response_format")));
  }
}

}  // namespace baton
