// Tool-call grammars as the coordinator composes them: Hermes/Qwen's <tool_call> blocks
// (one or several) and Mistral's [TOOL_CALLS][...]: names only of the tools, arguments
// that follow the named tool's schema (calls walked from the masks and validated by
// Python's jsonschema, the reference), and errors that say which tool's schema failed.
// Starts python3 (a process).
#include "baton/grammar/tool_call_grammar.h"

#include <gtest/gtest.h>

#include <random>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/json_schema.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::tool_call_grammar_test {
namespace {

using Json = nlohmann::ordered_json;

std::vector<ToolSchema> weather_tools() {
  return {
      {.name = "get_weather",
       .parameters = Json::parse(R"({"type": "object", "properties": {"city": {"type": "string"},
           "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]})")},
      {.name = "get_time", .parameters = Json::parse(R"({"type": "object", "properties": {
           "zone": {"type": "string", "pattern": "^[A-Z][a-z]+/[A-Z][a-z]+$"}}, "required": ["zone"]})")},
      {.name = "ping", .parameters = nullptr},
  };
}

std::shared_ptr<const CompiledGrammar> hermes(const std::vector<ToolSchema>& tools) {
  Grammar g;
  const Expr call = tool_call_object(g, tools);
  const Expr block = sequence({literal("<tool_call>\n"), call, literal("\n</tool_call>")});
  return CompiledGrammar::compile_expr(
      g, sequence({block, repeat(sequence({literal("\n"), block}), 0, 3)}));
}

bool accepts(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  GrammarMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

TEST(ToolCallGrammar, HermesBlocksAcceptOnlyKnownToolsWithTheirArguments) {
  const auto g = hermes(weather_tools());
  EXPECT_TRUE(accepts(g,
                      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                      "\"Paris\"}}\n</tool_call>"));
  EXPECT_TRUE(accepts(
      g,
      "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n"
      "{\"name\": \"get_time\", \"arguments\": {\"zone\": \"Europe/Paris\"}}\n</tool_call>"));
  EXPECT_FALSE(accepts(g,
                       "<tool_call>\n{\"name\": \"get_wether\", \"arguments\": {\"city\": "
                       "\"Paris\"}}\n</tool_call>"));
  EXPECT_FALSE(accepts(
      g,
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_FALSE(
      accepts(g, "<tool_call>\n{\"name\": \"ping\", \"arguments\": {\"x\": 1}}\n</tool_call>"));
  EXPECT_FALSE(accepts(g, "<tool_call>\n{\"arguments\": {}, \"name\": \"ping\"}\n</tool_call>"));
}

TEST(ToolCallGrammar, MistralArrayOfCalls) {
  Grammar g;
  const auto tools = weather_tools();
  const Expr calls = tool_call_array(g, tools, 1, 2);
  const auto grammar = CompiledGrammar::compile_expr(g, sequence({literal("[TOOL_CALLS]"), calls}));
  EXPECT_TRUE(accepts(
      grammar,
      R"([TOOL_CALLS][{"name": "ping", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "x", "unit": "celsius"}}])"));
  EXPECT_FALSE(accepts(grammar, R"([TOOL_CALLS][])"));
  EXPECT_FALSE(accepts(
      grammar,
      R"([TOOL_CALLS][{"name": "ping", "arguments": {}}, {"name": "ping", "arguments": {}}, {"name": "ping", "arguments": {}}])"));
  EXPECT_THROW(tool_call_array(g, tools, 0, 2), std::invalid_argument);
  const std::vector<ToolSchema> none;
  EXPECT_THROW(tool_call_object(g, none), std::invalid_argument);
}

TEST(ToolCallGrammar, WalkedCallsValidateAgainstTheirToolsSchema) {
  const auto tools = weather_tools();
  Grammar g;
  const Expr calls = tool_call_array(g, tools, 1, 3, ToolCallFormat{.arguments_key = "parameters"});
  const auto grammar = CompiledGrammar::compile_expr(g, calls);
  MaskCache cache(grammar, testing::test_vocabulary());
  Json by_name = Json::object();
  for (const ToolSchema& t : tools)
    by_name[t.name] = t.parameters.is_null() ? Json{{"type", "object"}} : t.parameters;
  std::mt19937 rng(3);
  std::vector<nlohmann::json> lines;
  for (int walk = 0; walk < 60; ++walk)
    if (const auto out = testing::random_walk(GrammarMatcher(grammar), cache, rng, 200))
      lines.push_back(nlohmann::json::array({nlohmann::json::parse(by_name.dump()), *out}));
  EXPECT_GE(lines.size(), 20u);
  const std::string report = testing::run_python(R"(
import json, sys
from jsonschema import Draft202012Validator
bad = 0
for line in open(sys.argv[1], encoding='utf-8'):
    schemas, text = json.loads(line)
    for call in json.loads(text):
        if set(call) != {'name', 'parameters'} or call['name'] not in schemas:
            print('bad call', text); bad += 1; continue
        for error in Draft202012Validator(schemas[call['name']]).iter_errors(call['parameters']):
            print('invalid', text, error.message); bad += 1
print('bad', bad)
)",
                                                 lines);
  EXPECT_NE(report.find("bad 0\n"), std::string::npos) << report.substr(0, 3000);
}

TEST(ToolCallGrammar, SchemaErrorsNameTheTool) {
  Grammar g;
  const std::vector<ToolSchema> tools = {
      {.name = "ok", .parameters = Json{{"type", "object"}}},
      {.name = "bad",
       .parameters = Json::parse(R"({"type": "object", "properties": {"n": {"multipleOf": 2}}})")}};
  try {
    (void)tool_call_object(g, tools);
    ADD_FAILURE() << "no SchemaError";
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.keyword(), "multipleOf");
    EXPECT_EQ(e.path(), "/1/properties/n/multipleOf");
    EXPECT_NE(std::string(e.what()).find("tool 'bad'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::grammar::tool_call_grammar_test
