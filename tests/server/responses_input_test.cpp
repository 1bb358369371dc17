// The Responses API's tool fields read into the chat call: function tools in Chat
// Completions' shape and the client's key order, tool_choice, parallel_tool_calls,
// function_call / function_call_output items as the chat messages a template takes,
// text.format, what the response echoes, and every mistake a 400 naming the Responses
// field.
#include "baton/server/api/responses_input.h"

#include <gtest/gtest.h>

#include "baton/server/api/peer_requests.h"
#include "baton/server/http/api_error.h"

namespace baton::responses_input_test {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::string kTools = R"("tools": [
  {"type": "function", "name": "get_weather", "description": "Weather in a city",
   "parameters": {"type": "object", "properties": {"unit": {"type": "string"},
                  "city": {"type": "string"}}, "required": ["city", "unit"],
                  "additionalProperties": false}, "strict": true},
  {"type": "function", "name": "get_time", "parameters": null, "strict": false}])";

std::string request(const std::string& extra, const std::string& input = R"("q")") {
  return R"({"model": "m", "input": )" + input + extra + "}";
}

ApiError refusal(const std::string& body) {
  try {
    (void)parse_responses_call(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(ResponsesInput, FunctionToolsBecomeChatToolsInTheClientsKeyOrder) {
  const ResponsesCall call =
      parse_responses_call(request(", " + kTools + R"(, "parallel_tool_calls": false)"));
  const ToolUse& use = call.call.tool_use;
  ASSERT_EQ(use.tools.size(), 2u);
  const ordered_json expected = ordered_json::parse(R"({"type": "function", "function": {
      "name": "get_weather", "description": "Weather in a city",
      "parameters": {"type": "object", "properties": {"unit": {"type": "string"},
                     "city": {"type": "string"}}, "required": ["city", "unit"],
                     "additionalProperties": false}, "strict": true}})");
  EXPECT_EQ(use.tools[0].dump(), expected.dump());
  EXPECT_EQ(use.tools[1].dump(),
            R"({"type":"function","function":{"name":"get_time","strict":false}})");
  EXPECT_FALSE(use.parallel);
  EXPECT_EQ(use.choice, ToolUse::Choice::automatic);
  // Echoed as sent.
  EXPECT_EQ(call.tools, json::parse(request(", " + kTools))["tools"]);
  EXPECT_EQ(call.tool_choice, "auto");
  EXPECT_TRUE(parse_responses_call(request(", " + kTools)).call.tool_use.parallel);
}

TEST(ResponsesInput, ToolChoiceIsReadAsChatCompletionsChoice) {
  struct Case {
    std::string choice;
    ToolUse::Choice expected;
  };
  const std::vector<Case> cases = {
      {.choice = R"("auto")", .expected = ToolUse::Choice::automatic},
      {.choice = R"("none")", .expected = ToolUse::Choice::none},
      {.choice = R"("required")", .expected = ToolUse::Choice::required},
      {.choice = R"({"type": "function", "name": "get_time"})", .expected = ToolUse::Choice::named},
  };
  for (const Case& c : cases) {
    const ResponsesCall call =
        parse_responses_call(request(", " + kTools + R"(, "tool_choice": )" + c.choice));
    EXPECT_EQ(call.call.tool_use.choice, c.expected) << c.choice;
    EXPECT_EQ(call.tool_choice, json::parse(c.choice));
  }
  EXPECT_EQ(parse_responses_call(request(", " + kTools + R"(, "tool_choice": {"type":
                                              "function", "name": "get_time"})"))
                .call.tool_use.function,
            "get_time");
}

TEST(ResponsesInput, CallItemsJoinOneAssistantMessageAndOutputsAreToolMessages) {
  const ResponsesCall call = parse_responses_call(request(", " + kTools, R"([
    {"role": "user", "content": "weather and time in Paris?"},
    {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "Let me look."}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": "{\"unit\": \"c\", \"city\": \"Paris\"}", "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
    {"type": "function_call_output", "call_id": "call_2",
     "output": [{"type": "input_text", "text": "10:00"}]},
    {"type": "function_call", "call_id": "call_3", "name": "get_time", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_3", "output": "10:01"}])"));
  const std::vector<ChatMessage>& m = call.call.messages;
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0].role, "user");
  EXPECT_EQ(m[1].role, "assistant");
  EXPECT_EQ(m[1].content, "Let me look.");
  ASSERT_EQ(m[1].tool_calls.size(), 2u);
  EXPECT_EQ(m[1].tool_calls[0].id, "call_1");
  EXPECT_EQ(m[1].tool_calls[0].name, "get_weather");
  EXPECT_EQ(m[1].tool_calls[0].arguments, R"({"unit": "c", "city": "Paris"})");
  EXPECT_EQ(m[1].tool_calls[1].id, "call_2");
  EXPECT_EQ(m[2].role, "tool");
  EXPECT_EQ(m[2].tool_call_id, "call_1");
  EXPECT_EQ(m[2].name, "get_weather");
  EXPECT_EQ(m[2].content, "18 C");
  EXPECT_EQ(m[3].tool_call_id, "call_2");
  EXPECT_EQ(m[3].content, "10:00");
  // A call after the results opens a new assistant message, without text.
  EXPECT_EQ(m[4].role, "assistant");
  EXPECT_EQ(m[4].content, "");
  ASSERT_EQ(m[4].tool_calls.size(), 1u);
  EXPECT_EQ(m[4].tool_calls[0].id, "call_3");
  EXPECT_EQ(m[5].role, "tool");
  EXPECT_EQ(m[5].tool_call_id, "call_3");
}

TEST(ResponsesInput, TextFormatIsTheAnswersShape) {
  ResponsesCall call = parse_responses_call(request(R"(, "text": {"format": {"type":
      "json_schema", "name": "answer", "strict": true,
      "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})"));
  EXPECT_EQ(call.call.response_format.kind, ResponseFormat::Kind::json_schema);
  EXPECT_EQ(call.call.response_format.name, "answer");
  EXPECT_EQ(call.call.response_format.schema.dump(),
            R"({"type":"object","properties":{"b":{},"a":{}}})");
  EXPECT_EQ(call.text_format["name"], "answer");
  call = parse_responses_call(request(R"(, "text": {"format": {"type": "json_object"}})"));
  EXPECT_EQ(call.call.response_format.kind, ResponseFormat::Kind::json_object);
  call = parse_responses_call(request(R"(, "text": {"format": {"type": "text"}})"));
  EXPECT_EQ(call.call.response_format.kind, ResponseFormat::Kind::text);
  call = parse_responses_call(request(""));
  EXPECT_EQ(call.call.response_format.kind, ResponseFormat::Kind::text);
  EXPECT_EQ(call.text_format, json::parse(R"({"type": "text"})"));
}

TEST(ResponsesInput, MistakesAreRefusedNamingTheResponsesField) {
  const std::string tools = ", " + kTools;
  const std::string called = R"([{"role": "user", "content": "q"},
      {"type": "function_call", "call_id": "call_1", "name": "get_time", "arguments": "{}"}, )";
  struct Case {
    std::string body;
    std::string param;
  };
  const std::vector<Case> cases = {
      {.body = request(R"(, "tools": [{"type": "function", "parameters": {}}])"),
       .param = "tools[0].name"},
      {.body = request(R"(, "tools": [{"type": "function", "name": "a b"}])"),
       .param = "tools[0].name"},
      {.body = request(R"(, "tools": [{"type": "function", "name": "a",
                                       "parameters": {"type": "array"}}])"),
       .param = "tools[0].parameters.type"},
      {.body = request(R"(, "tools": [{"type": "function", "name": "a", "parameters": 1}])"),
       .param = "tools[0].parameters"},
      {.body = request(R"(, "tools": [{"type": "function", "name": "a"},
                                      {"type": "function", "name": "a"}])"),
       .param = "tools[1].name"},
      {.body = request(R"(, "tools": [{"type": "function", "name": "a"},
                                      {"type": "file_search", "vector_store_ids": []}])"),
       .param = "tools[1].type"},
      {.body = request(R"(, "tools": [{"name": "a"}])"), .param = "tools[0].type"},
      {.body = request(tools + R"(, "tool_choice": {"type": "function", "name": "nope"})"),
       .param = "tool_choice.name"},
      {.body = request(tools + R"(, "tool_choice": {"type": "function"})"),
       .param = "tool_choice.name"},
      {.body = request(tools + R"(, "tool_choice": {"type": "file_search"})"),
       .param = "tool_choice.type"},
      {.body = request(tools + R"(, "tool_choice": "any")"), .param = "tool_choice"},
      {.body = request(R"(, "tool_choice": "required")"), .param = "tool_choice"},
      {.body = request(tools + R"(, "parallel_tool_calls": "yes")"),
       .param = "parallel_tool_calls"},
      {.body = request(tools, called + R"({"type": "function_call_output", "call_id": "call_9",
                                            "output": "x"}])"),
       .param = "input[2].call_id"},
      {.body = request(tools, called + R"({"type": "function_call_output", "output": "x"}])"),
       .param = "input[2].call_id"},
      {.body = request(tools, called + R"({"type": "function_call_output", "call_id": "call_1"}])"),
       .param = "input[2].output"},
      {.body = request(tools, called + R"({"type": "function_call_output", "call_id": "call_1",
          "output": [{"type": "input_image", "image_url": "x"}]}])"),
       .param = "input[2].output[0].type"},
      {.body = request(tools, R"([{"type": "function_call", "call_id": "c", "name": "f"}])"),
       .param = "input[0].arguments"},
      {.body = request(tools, R"([{"type": "function_call", "call_id": "c", "name": "f",
                                   "arguments": {}}])"),
       .param = "input[0].arguments"},
      {.body = request(tools, R"([{"type": "function_call", "name": "f", "arguments": "{}"}])"),
       .param = "input[0].call_id"},
      {.body = request(R"(, "text": {"format": {"type": "json_schema", "name": "n"}})"),
       .param = "text.format.schema"},
      {.body = request(R"(, "text": {"format": {"type": "json_schema", "schema": {},
                                                "strict": "yes"}})"),
       .param = "text.format.strict"},
      {.body = request(R"(, "text": {"format": {"type": "json_schema", "schema": {},
                                                "name": 3}})"),
       .param = "text.format.name"},
      {.body = request(R"(, "text": {"format": "json"})"), .param = "text.format"},
      {.body = request(R"(, "text": "json")"), .param = "text"},
  };
  for (const Case& c : cases) {
    const ApiError error = refusal(c.body);
    EXPECT_EQ(error.status(), 400) << c.body;
    EXPECT_EQ(error.param(), c.param) << c.body << "\n" << error.what();
    EXPECT_EQ(std::string(error.what()).find(".function."), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find("json_schema."), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace baton::responses_input_test
