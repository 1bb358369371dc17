// Anthropic's tool use read into the chat call: tools as OpenAI-shaped tools with the
// client's key order, tool_choice's four types, tool_use and tool_result blocks as the chat
// messages a template takes, output_config.format, and every mistake a 400 naming
// Anthropic's field.
#include "baton/server/api/anthropic_tools.h"

#include <gtest/gtest.h>

#include "baton/server/api/peer_requests.h"
#include "baton/server/http/api_error.h"

namespace baton::anthropic_tools_test {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::string kTools = R"("tools": [
  {"name": "get_weather", "description": "Weather in a city",
   "input_schema": {"type": "object", "properties": {"unit": {"type": "string"},
                    "city": {"type": "string"}}, "required": ["city"]},
   "cache_control": {"type": "ephemeral"}},
  {"type": "custom", "name": "get_time", "input_schema": {"type": "object"}}])";

std::string request(const std::string& extra,
                    const std::string& messages = R"([{"role": "user", "content": "q"}])") {
  return R"({"model": "m", "max_tokens": 9, "messages": )" + messages + extra + "}";
}

ApiError refusal(const std::string& body) {
  try {
    (void)parse_anthropic_call(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(AnthropicTools, ToolsBecomeOpenAiShapedToolsInTheClientsKeyOrder) {
  const CompletionCall call = parse_anthropic_call(request(", " + kTools));
  ASSERT_EQ(call.tool_use.tools.size(), 2u);
  const ordered_json expected = ordered_json::parse(R"({"type": "function", "function": {
      "name": "get_weather", "description": "Weather in a city",
      "parameters": {"type": "object", "properties": {"unit": {"type": "string"},
                     "city": {"type": "string"}}, "required": ["city"]}}})");
  EXPECT_EQ(call.tool_use.tools[0], expected);
  // The same text as Python's json.dumps of the same dict: keys in the client's order.
  EXPECT_EQ(call.tool_use.tools[0].dump(), expected.dump());
  EXPECT_EQ(call.tool_use.tools[1]["function"]["name"], "get_time");
  EXPECT_FALSE(call.tool_use.tools[1]["function"].contains("description"));
  EXPECT_EQ(call.tool_use.choice, ToolUse::Choice::automatic);
  EXPECT_TRUE(call.tool_use.parallel);
  EXPECT_TRUE(call.tool_use.calls_possible());
  EXPECT_TRUE(parse_anthropic_call(request("")).tool_use.tools.empty());
}

TEST(AnthropicTools, ToolChoiceTypesMapToTheChatChoices) {
  struct Case {
    std::string choice;
    ToolUse::Choice expected;
    bool parallel;
  };
  const std::vector<Case> cases = {
      {.choice = R"({"type": "auto"})", .expected = ToolUse::Choice::automatic, .parallel = true},
      {.choice = R"({"type": "any"})", .expected = ToolUse::Choice::required, .parallel = true},
      {.choice = R"({"type": "none"})", .expected = ToolUse::Choice::none, .parallel = true},
      {.choice = R"({"type": "tool", "name": "get_time"})",
       .expected = ToolUse::Choice::named,
       .parallel = true},
      {.choice = R"({"type": "any", "disable_parallel_tool_use": true})",
       .expected = ToolUse::Choice::required,
       .parallel = false},
      {.choice = R"({"type": "auto", "disable_parallel_tool_use": false})",
       .expected = ToolUse::Choice::automatic,
       .parallel = true},
  };
  for (const Case& c : cases) {
    const CompletionCall call =
        parse_anthropic_call(request(", " + kTools + R"(, "tool_choice": )" + c.choice));
    EXPECT_EQ(call.tool_use.choice, c.expected) << c.choice;
    EXPECT_EQ(call.tool_use.parallel, c.parallel) << c.choice;
  }
  const CompletionCall named =
      parse_anthropic_call(request(", " + kTools + R"(, "tool_choice": {"type": "tool",
                                                                      "name": "get_time"})"));
  EXPECT_EQ(named.tool_use.function, "get_time");
  EXPECT_FALSE(parse_anthropic_call(request(", " + kTools + R"(, "tool_choice": {"type": "none"})"))
                   .tool_use.calls_possible());
}

TEST(AnthropicTools, ToolUseAndToolResultBlocksBecomeCallsAndToolMessages) {
  const CompletionCall call = parse_anthropic_call(request(", " + kTools, R"([
    {"role": "user", "content": "weather and time in Paris?"},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Let me look."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
       "input": {"unit": "c", "city": "Paris"}},
      {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 C"},
      {"type": "tool_result", "tool_use_id": "toolu_2",
       "content": [{"type": "text", "text": "10:"}, {"type": "text", "text": "00"}]},
      {"type": "text", "text": "and tomorrow?"}]},
    {"role": "assistant", "content": [
      {"type": "tool_use", "id": "toolu_3", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_3", "content": "no forecast",
       "is_error": true}]}])"));
  ASSERT_EQ(call.messages.size(), 7u);
  const ChatMessage& asked = call.messages[1];
  EXPECT_EQ(asked.role, "assistant");
  EXPECT_EQ(asked.content, "Let me look.");
  ASSERT_EQ(asked.tool_calls.size(), 2u);
  EXPECT_EQ(asked.tool_calls[0].id, "toolu_1");
  EXPECT_EQ(asked.tool_calls[0].name, "get_weather");
  EXPECT_EQ(asked.tool_calls[0].arguments, R"({"unit":"c","city":"Paris"})");  // client's order
  EXPECT_EQ(asked.tool_calls[1].arguments, "{}");
  // One tool message per result, in order, then the user's text.
  EXPECT_EQ(call.messages[2].role, "tool");
  EXPECT_EQ(call.messages[2].tool_call_id, "toolu_1");
  EXPECT_EQ(call.messages[2].name, "get_weather");
  EXPECT_EQ(call.messages[2].content, "18 C");
  EXPECT_EQ(call.messages[3].tool_call_id, "toolu_2");
  EXPECT_EQ(call.messages[3].name, "get_time");
  EXPECT_EQ(call.messages[3].content, "10:00");
  EXPECT_EQ(call.messages[4].role, "user");
  EXPECT_EQ(call.messages[4].content, "and tomorrow?");
  EXPECT_EQ(call.messages[5].role, "assistant");
  EXPECT_EQ(call.messages[5].content, "");
  ASSERT_EQ(call.messages[5].tool_calls.size(), 1u);
  // Only a result: no user message after it; an error result says so.
  EXPECT_EQ(call.messages[6].role, "tool");
  EXPECT_EQ(call.messages[6].content, "Error: no forecast");
  EXPECT_EQ(call.chat_end, ChatEnd::open_reply);
}

TEST(AnthropicTools, OutputConfigFormatIsAJsonSchemaAnswer) {
  const CompletionCall call = parse_anthropic_call(request(R"(, "output_config": {"format":
      {"type": "json_schema", "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})"));
  EXPECT_EQ(call.response_format.kind, ResponseFormat::Kind::json_schema);
  EXPECT_EQ(call.response_format.schema.dump(),
            R"({"type":"object","properties":{"b":{},"a":{}}})");
  EXPECT_EQ(parse_anthropic_call(request(R"(, "output_config": {})")).response_format.kind,
            ResponseFormat::Kind::text);
}

TEST(AnthropicTools, MistakesAreRefusedNamingAnthropicsField) {
  const std::string tools = ", " + kTools;
  const std::string asked = R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                         "name": "get_time", "input": {}}]}, )";
  struct Case {
    std::string body;
    std::string param;
  };
  const std::vector<Case> cases = {
      {.body = request(R"(, "tools": [{"input_schema": {"type": "object"}}])"),
       .param = "tools[0].name"},
      {.body = request(R"(, "tools": [{"name": "a", "input_schema": {}},
                                      {"name": "b c", "input_schema": {}}])"),
       .param = "tools[1].name"},
      {.body = request(R"(, "tools": [{"name": "a"}])"), .param = "tools[0].input_schema"},
      {.body = request(R"(, "tools": [{"name": "a", "input_schema": {"type": "string"}}])"),
       .param = "tools[0].input_schema.type"},
      {.body = request(R"(, "tools": [{"name": "a", "input_schema": []}])"),
       .param = "tools[0].input_schema"},
      {.body = request(R"(, "tools": [{"name": "a", "input_schema": {}, "description": 3}])"),
       .param = "tools[0].description"},
      {.body = request(R"(, "tools": [{"name": "a", "input_schema": {}},
                                      {"name": "a", "input_schema": {}}])"),
       .param = "tools[1].name"},
      {.body = request(R"(, "tools": [{"type": "bash_20250124", "name": "bash"}])"),
       .param = "tools[0].type"},
      {.body = request(R"(, "tools": {"name": "a"})"), .param = "tools"},
      {.body = request(tools + R"(, "tool_choice": {"type": "tool", "name": "nope"})"),
       .param = "tool_choice.name"},
      {.body = request(tools + R"(, "tool_choice": {"type": "tool"})"),
       .param = "tool_choice.name"},
      {.body = request(tools + R"(, "tool_choice": {"type": "required"})"),
       .param = "tool_choice.type"},
      {.body = request(tools + R"(, "tool_choice": "auto")"), .param = "tool_choice"},
      {.body = request(R"(, "tool_choice": {"type": "any"})"), .param = "tool_choice"},
      {.body = request(tools + R"(, "tool_choice": {"type": "any",
                                                    "disable_parallel_tool_use": 1})"),
       .param = "tool_choice.disable_parallel_tool_use"},
      {.body = request(tools, asked + R"({"role": "user", "content": [{"type": "tool_result",
                                          "tool_use_id": "toolu_9", "content": "x"}]}])"),
       .param = "messages[2].content[0].tool_use_id"},
      {.body = request(tools, asked + R"({"role": "user", "content": [{"type": "tool_result",
                                          "content": "x"}]}])"),
       .param = "messages[2].content[0].tool_use_id"},
      {.body = request(tools, asked + R"({"role": "user", "content": [{"type": "tool_result",
          "tool_use_id": "toolu_1", "content": [{"type": "image", "source": {}}]}]}])"),
       .param = "messages[2].content[0].content[0].type"},
      {.body = request(tools, asked + R"({"role": "user", "content": [{"type": "tool_result",
          "tool_use_id": "toolu_1", "is_error": "yes"}]}])"),
       .param = "messages[2].content[0].is_error"},
      {.body = request(tools, R"([{"role": "assistant", "content": [{"type": "tool_use",
          "id": "t", "name": "get_time", "input": "{}"}]}])"),
       .param = "messages[0].content[0].input"},
      {.body = request(tools, R"([{"role": "assistant", "content": [{"type": "tool_use",
          "name": "get_time", "input": {}}]}])"),
       .param = "messages[0].content[0].id"},
      {.body = request(tools, R"([{"role": "user", "content": [{"type": "tool_use",
          "id": "t", "name": "get_time", "input": {}}]}])"),
       .param = "messages[0].content[0].type"},
      {.body = request(tools, R"([{"role": "assistant", "content": [{"type": "tool_result",
          "tool_use_id": "t"}]}])"),
       .param = "messages[0].content[0].type"},
      {.body = request(R"(, "output_config": {"format": {"type": "json_schema"}})"),
       .param = "output_config.format.schema"},
      {.body = request(R"(, "output_config": {"format": {"type": "json_object"}})"),
       .param = "output_config.format.type"},
      {.body = request(R"(, "output_config": {"effort": "high"})"),
       .param = "output_config.effort"},
  };
  for (const Case& c : cases) {
    const ApiError error = refusal(c.body);
    EXPECT_EQ(error.status(), 400) << c.body;
    EXPECT_EQ(error.param(), c.param) << c.body << "\n" << error.what();
    // The message names the same field, never the chat call's.
    EXPECT_EQ(std::string(error.what()).find(".function."), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace baton::anthropic_tools_test
