// The request fields of tools and structured outputs that the APIs share: a tool list
// checked (chat_tools.h) with its mistakes as 400s naming the field, the tool results of a
// conversation matched to the calls they answer, OpenAI's response_format, and a field
// read with its keys in the client's order (what a template's tojson prints).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/output/output_request.h"
#include "baton/model/chat/chat_message.h"

namespace baton {

// The field `name` of the body's object, keys in the client's order (null when absent).
nlohmann::ordered_json ordered_field(std::string_view body, const char* name);

// OpenAI-shaped tools ([{"type": "function", "function": {...}}]) checked; 400 naming the
// field (`param` replaces "tools" for an API that calls them otherwise).
ChatTools checked_tools(const nlohmann::ordered_json& tools, const std::string& param = "tools");

// OpenAI's tool_choice: "auto", "none", "required" or {"type": "function", "function":
// {"name": N}} (N one of the tools); sets tool_use.choice and .function. 400 naming it.
void read_tool_choice(const nlohmann::json& value, ToolUse& tool_use);

// Each tool message answers a call an earlier assistant message made (by tool_call_id);
// else 400 naming `<messages_param>[i].tool_call_id`. A tool message without an id (a
// template that needs none) passes.
void check_tool_results(const std::vector<ChatMessage>& messages,
                        const std::string& messages_param);

// OpenAI's response_format: {"type": "text"}, {"type": "json_object"} or {"type":
// "json_schema", "json_schema": {"name", "schema", "strict", "description"}}. The schema
// must be an object (compiled later; SchemaError then names the keyword). `param` names it.
ResponseFormat read_response_format(const nlohmann::ordered_json& value,
                                    const std::string& param = "response_format");

}  // namespace baton
