// The tools a request offers the model (OpenAI's `tools`: [{"type": "function", "function":
// {"name", "description", "parameters"}}]), checked before they reach a chat template or a
// grammar: the server calls these on a request's tools and tool_choice.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// Kept in the client's key order: a template's tojson prints them as Python's dicts would.
using ChatTools = std::vector<nlohmann::ordered_json>;

// Throws std::invalid_argument naming the field (tools[2].function.name, ...) for tools
// that are not a list, an entry that is not {"type": "function", "function": {...}}, a
// name that is missing, empty, longer than 64 bytes or holds a character other than
// ASCII letters, digits, '_', '-', '.' and ':' (OpenAI allows letters, digits, '_' and '-';
// baton also lets through the dotted and namespaced names of MCP tools), a description
// that is not a string, parameters that are not a JSON object schema (an object whose
// "type", when given, is "object"), and a name given twice.
void validate_tools(const nlohmann::ordered_json& tools);

// validate_tools, then the list as render() takes it.
ChatTools tools_from_json(const nlohmann::ordered_json& tools);

// The name of each tool, in order (for tools already validated).
std::vector<std::string> tool_names(const ChatTools& tools);

// std::invalid_argument naming `field` when `name` is not one of the tools' names (a
// tool_choice naming an unknown function).
void check_tool_choice(const ChatTools& tools, std::string_view name, std::string_view field);

}  // namespace baton
