// Grammars for tool calls, composed from json_schema.h and the expressions of grammar.h:
// one call as a JSON object whose name is one of the tools and whose arguments follow that
// tool's parameters schema, and a JSON array of such calls (Mistral's [TOOL_CALLS][...]).
// A family's markers go around them with literal/sequence/repeat, e.g. Hermes and Qwen:
//   repeat(sequence({literal("<tool_call>\n"), call, literal("\n</tool_call>")}), 1, n)
// Thread-safety: pure functions writing into the Grammar they are given.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "baton/grammar/grammar.h"
#include "baton/grammar/json_grammar.h"

namespace baton::grammar {

struct ToolSchema {
  std::string name;
  nlohmann::ordered_json parameters;  // null: no arguments ({})
};

struct ToolCallFormat {
  std::string name_key = "name";
  std::string arguments_key = "arguments";  // Llama 3.1-3.3 write "parameters"
};

// {"name": "<tool>", "arguments": <its parameters>} (keys in that order) for any of
// `tools`. Throws SchemaError (json_schema.h) for a schema it cannot compile, its path
// prefixed with the tool's index ("/2/properties/x/multipleOf"), and std::invalid_argument
// for no tools.
Expr tool_call_object(Grammar& grammar, std::span<const ToolSchema> tools,
                      const ToolCallFormat& format = {}, const JsonLayout& layout = {});

// [call, call, ...] with min..max calls (max kUnbounded: any number).
Expr tool_call_array(Grammar& grammar, std::span<const ToolSchema> tools, std::uint32_t min,
                     std::uint32_t max, const ToolCallFormat& format = {},
                     const JsonLayout& layout = {});

}  // namespace baton::grammar
