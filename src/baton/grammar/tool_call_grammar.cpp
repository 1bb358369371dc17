#include "baton/grammar/tool_call_grammar.h"

#include <stdexcept>

#include "baton/grammar/json_schema.h"

namespace baton::grammar {

Expr tool_call_object(Grammar& grammar, std::span<const ToolSchema> tools,
                      const ToolCallFormat& format, const JsonLayout& layout) {
  if (tools.empty()) throw std::invalid_argument("a tool call grammar needs at least one tool");
  const JsonGrammar json(grammar, layout);
  const Expr sep = sequence({json.ws(), byte_of(','), json.ws()});
  std::vector<Expr> calls;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const nlohmann::ordered_json no_arguments = {{"type", "object"},
                                                 {"properties", nlohmann::ordered_json::object()}};
    const nlohmann::ordered_json& schema =
        tools[i].parameters.is_null() ? no_arguments : tools[i].parameters;
    Expr arguments;
    try {
      arguments = json_schema_value(grammar, schema, layout);
    } catch (const SchemaError& e) {
      const std::string what = e.what();
      throw SchemaError(e.keyword(), "/" + std::to_string(i) + e.path(),
                        "tool '" + tools[i].name + "': " + what.substr(what.find(": ") + 2));
    }
    calls.push_back(sequence(
        {byte_of('{'), json.ws(),
         json.member(JsonGrammar::string_literal(format.name_key),
                     JsonGrammar::string_literal(tools[i].name)),
         sep, json.member(JsonGrammar::string_literal(format.arguments_key), std::move(arguments)),
         json.ws(), byte_of('}')}));
  }
  return choice(std::move(calls));
}

Expr tool_call_array(Grammar& grammar, std::span<const ToolSchema> tools, std::uint32_t min,
                     std::uint32_t max, const ToolCallFormat& format, const JsonLayout& layout) {
  if (min == 0 || min > max)
    throw std::invalid_argument("a tool call array needs 1 <= min <= max calls");
  const JsonGrammar json(grammar, layout);
  const RuleId call =
      grammar.add_rule("tool_call", tool_call_object(grammar, tools, format, layout));
  const Expr more = sequence({json.ws(), byte_of(','), json.ws(), ref(call)});
  return sequence({byte_of('['), json.ws(), ref(call),
                   repeat(more, min - 1, max == kUnbounded ? kUnbounded : max - 1), json.ws(),
                   byte_of(']')});
}

}  // namespace baton::grammar
