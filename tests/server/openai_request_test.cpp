#include "baton/server/api/openai_request.h"

#include <gtest/gtest.h>

#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using Kind = CompletionCall::Kind;

// The ApiError a body gets; fails the test when it parses.
ApiError refusal(const std::string& body, Kind kind = Kind::chat) {
  try {
    (void)parse_completion_call(body, kind);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(OpenAiRequest, ReadsEveryChatFieldBatonSupports) {
  const CompletionCall call = parse_completion_call(R"({
    "model": "m", "messages": [{"role": "developer", "content": "be brief"},
                               {"role": "user", "content": [{"type": "text", "text": "a"},
                                                            {"type": "text", "text": "b"}]}],
    "max_completion_tokens": 7, "temperature": 0.5, "top_p": 0.9, "seed": -3,
    "stop": ["x", "y"], "presence_penalty": 1.5, "frequency_penalty": -0.5,
    "logprobs": true, "top_logprobs": 3, "stream": true,
    "stream_options": {"include_usage": true}, "n": 1, "user": "u", "store": false,
    "response_format": {"type": "text"}, "tools": null})",
                                                    Kind::chat);
  EXPECT_EQ(call.model, "m");
  ASSERT_EQ(call.messages.size(), 2u);
  EXPECT_EQ(call.messages[0].role, "system");
  EXPECT_EQ(call.messages[1].content, "ab");
  EXPECT_EQ(call.max_tokens, 7);
  EXPECT_DOUBLE_EQ(*call.sampling.temperature, 0.5);
  EXPECT_DOUBLE_EQ(*call.sampling.top_p, 0.9);
  EXPECT_EQ(*call.sampling.seed, static_cast<std::uint64_t>(-3));
  EXPECT_EQ(call.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_DOUBLE_EQ(*call.sampling.presence_penalty, 1.5);
  EXPECT_DOUBLE_EQ(*call.sampling.frequency_penalty, -0.5);
  EXPECT_TRUE(call.logprobs);
  EXPECT_EQ(call.top_logprobs, 3);
  EXPECT_TRUE(call.stream);
  EXPECT_TRUE(call.include_usage);
}

TEST(OpenAiRequest, ReadsToolsToolChoiceAndAToolRoundTrip) {
  const CompletionCall call = parse_completion_call(R"({
    "model": "m", "messages": [
      {"role": "user", "content": "weather?"},
      {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"city\": \"Oslo\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "get", "content": "cold"},
      {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "warm"}]}],
    "tools": [{"type": "function", "function": {"name": "get", "description": "d",
               "parameters": {"type": "object", "required": ["city"],
                              "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": {"type": "function", "function": {"name": "get"}},
    "parallel_tool_calls": false})",
                                                    Kind::chat);
  ASSERT_EQ(call.messages.size(), 4u);
  ASSERT_EQ(call.messages[1].tool_calls.size(), 2u);
  EXPECT_EQ(call.messages[1].content, "");
  EXPECT_EQ(call.messages[1].tool_calls[0].id, "c1");
  EXPECT_EQ(call.messages[1].tool_calls[0].name, "get");
  EXPECT_EQ(call.messages[1].tool_calls[0].arguments, R"({"city": "Oslo"})");
  EXPECT_EQ(call.messages[2].role, "tool");
  EXPECT_EQ(call.messages[2].tool_call_id, "c1");
  EXPECT_EQ(call.messages[2].name, "get");
  EXPECT_EQ(call.messages[3].content, "warm");
  ASSERT_EQ(call.tool_use.tools.size(), 1u);
  // The client's key order is kept (what a template's tojson prints).
  EXPECT_EQ(call.tool_use.tools[0]["function"]["parameters"].dump(),
            R"({"type":"object","required":["city"],"properties":{"city":{"type":"string"}}})");
  EXPECT_EQ(call.tool_use.choice, ToolUse::Choice::named);
  EXPECT_EQ(call.tool_use.function, "get");
  EXPECT_FALSE(call.tool_use.parallel);
  EXPECT_TRUE(call.tool_use.calls_possible());
}

TEST(OpenAiRequest, ReadsResponseFormats) {
  const auto format = [](const std::string& value) {
    return parse_completion_call(R"({"model": "m", "messages": [{"role": "user", "content": "q"}],
                                     "response_format": )" +
                                     value + "}",
                                 Kind::chat)
        .response_format;
  };
  EXPECT_EQ(format(R"({"type": "text"})").kind, ResponseFormat::Kind::text);
  EXPECT_EQ(format(R"({"type": "json_object"})").kind, ResponseFormat::Kind::json_object);
  const ResponseFormat schema = format(R"({"type": "json_schema", "json_schema": {"name": "p",
      "strict": true, "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})");
  EXPECT_EQ(schema.kind, ResponseFormat::Kind::json_schema);
  EXPECT_EQ(schema.name, "p");
  EXPECT_EQ(schema.schema.dump(), R"({"type":"object","properties":{"b":{},"a":{}}})");
}

TEST(OpenAiRequest, VllmsPromptEndsAddGenerationPromptAndContinueFinalMessage) {
  const std::string head = R"({"model": "m", "messages": [{"role": "user", "content": "q"},
                                                          {"role": "assistant", "content": "a"}])";
  const auto end_of = [&](const std::string& rest) {
    return parse_completion_call(head + rest + "}", CompletionCall::Kind::chat).chat_end;
  };
  EXPECT_EQ(end_of(""), ChatEnd::open_reply);
  EXPECT_EQ(end_of(R"(, "add_generation_prompt": false)"), ChatEnd::as_is);
  EXPECT_EQ(end_of(R"(, "add_generation_prompt": false, "continue_final_message": true)"),
            ChatEnd::continue_last);
  for (const char* bad : {R"(, "continue_final_message": true)",
                          R"(, "add_generation_prompt": true, "continue_final_message": true)"}) {
    try {
      end_of(bad);
      ADD_FAILURE() << bad;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
      EXPECT_EQ(e.param(), "continue_final_message");
    }
  }
}

TEST(OpenAiRequest, ReadsCompletionPromptsAsTextOrTokens) {
  auto call = parse_completion_call(R"({"model": "m", "prompt": "hi", "logprobs": 2,
                                        "max_tokens": 3, "stop": "."})",
                                    Kind::text);
  EXPECT_EQ(call.prompt, "hi");
  EXPECT_TRUE(call.logprobs);
  EXPECT_EQ(call.top_logprobs, 2);
  EXPECT_EQ(call.stop, std::vector<std::string>{"."});
  call = parse_completion_call(R"({"model": "m", "prompt": ["one"]})", Kind::text);
  EXPECT_EQ(call.prompt, "one");
  call = parse_completion_call(R"({"model": "m", "prompt": [1, 2, 3]})", Kind::text);
  EXPECT_EQ(call.prompt_tokens, (std::vector<TokenId>{1, 2, 3}));
  EXPECT_FALSE(call.prompt.has_value());
}

TEST(OpenAiRequest, NullMeansUnset) {
  const auto call = parse_completion_call(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": null,
          "max_tokens": null, "stop": null, "seed": null})",
      Kind::chat);
  EXPECT_FALSE(call.sampling.temperature.has_value());
  EXPECT_FALSE(call.max_tokens.has_value());
  EXPECT_TRUE(call.stop.empty());
}

TEST(OpenAiRequest, RefusesMalformedJsonAndNonObjects) {
  EXPECT_EQ(refusal("{\"model\": ").code(), "invalid_json");
  EXPECT_EQ(refusal("[1, 2]").code(), "invalid_json");
  EXPECT_EQ(refusal("").status(), 400);
  // A number no double holds is out_of_range, not parse_error, to nlohmann: still a 400
  // (the fuzzer found it: fuzz/corpus/openai/number_overflow.json).
  EXPECT_EQ(refusal(R"({"model": 1e999})").code(), "invalid_json");
  EXPECT_NE(std::string(refusal(R"({"model": "m", "temperature": -1e400})").what())
                .find("a number out of range"),
            std::string::npos);
  const ApiError utf8 = refusal("{\"model\": \"\xff\"}");
  EXPECT_EQ(utf8.code(), "invalid_json");
  EXPECT_NE(std::string(utf8.what()).find("not valid UTF-8 at byte"), std::string::npos)
      << utf8.what();
}

struct Refused {
  const char* name;
  std::string body;
  std::string param;
  std::string code;  // empty: none expected
};

class OpenAiRequestRefusal : public ::testing::TestWithParam<Refused> {};

TEST_P(OpenAiRequestRefusal, NamesTheParameter) {
  const Refused& r = GetParam();
  const ApiError error = refusal(r.body);
  EXPECT_EQ(error.status(), 400);
  EXPECT_EQ(error.type(), "invalid_request_error");
  EXPECT_EQ(error.param(), r.param) << error.what();
  if (!r.code.empty()) {
    EXPECT_EQ(error.code(), r.code);
  }
}

const std::string kMsgs = R"("messages": [{"role": "user", "content": "x"}])";

INSTANTIATE_TEST_SUITE_P(
    Chat, OpenAiRequestRefusal,
    ::testing::Values(
        Refused{.name = "NoModel", .body = "{" + kMsgs + "}", .param = "model", .code = ""},
        Refused{.name = "ModelNotString",
                .body = R"({"model": 1, )" + kMsgs + "}",
                .param = "model",
                .code = ""},
        Refused{.name = "NoMessages", .body = R"({"model": "m"})", .param = "messages", .code = ""},
        Refused{.name = "EmptyMessages",
                .body = R"({"model": "m", "messages": []})",
                .param = "messages",
                .code = ""},
        Refused{.name = "BadRole",
                .body = R"({"model": "m", "messages": [{"role": "function", "content": "x"}]})",
                .param = "messages[0].role",
                .code = "unsupported_parameter"},
        Refused{.name = "ToolMessageWithoutId",
                .body = R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})",
                .param = "messages[0].tool_call_id",
                .code = ""},
        Refused{.name = "ToolResultAnsweringNoCall",
                .body = R"({"model": "m", "messages": [{"role": "user", "content": "q"},
                   {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                    "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                   {"role": "tool", "tool_call_id": "c2", "content": "r"}]})",
                .param = "messages[2].tool_call_id",
                .code = ""},
        Refused{.name = "ToolCallsOnAUserMessage",
                .body = R"({"model": "m", "messages": [{"role": "user", "content": "q",
                   "tool_calls": []}]})",
                .param = "messages[0].tool_calls",
                .code = ""},
        Refused{.name = "LegacyFunctionCall",
                .body = R"({"model": "m", "messages": [{"role": "assistant", "content": "",
                   "function_call": {"name": "f"}}]})",
                .param = "messages[0].function_call",
                .code = "unsupported_parameter"},
        Refused{
            .name = "ImagePart",
            .body =
                R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
            .param = "messages[0].content[0].type",
            .code = "unsupported_parameter"},
        Refused{.name = "NGreaterThanOne",
                .body = R"({"model": "m", "n": 2, )" + kMsgs + "}",
                .param = "n",
                .code = "unsupported_parameter"},
        Refused{.name = "ToolWithoutName",
                .body = R"({"model": "m", "tools": [{"type": "function", "function": {}}], )" +
                        kMsgs + "}",
                .param = "tools[0].function.name",
                .code = ""},
        Refused{.name = "ToolParametersNotAnObjectSchema",
                .body = R"({"model": "m", "tools": [{"type": "function", "function": {"name": "f",
                   "parameters": {"type": "string"}}}], )" +
                        kMsgs + "}",
                .param = "tools[0].function.parameters.type",
                .code = ""},
        Refused{
            .name = "ToolChoiceNamingNoTool",
            .body = R"({"model": "m", "tools": [{"type": "function", "function": {"name": "f"}}],
                   "tool_choice": {"type": "function", "function": {"name": "g"}}, )" +
                    kMsgs + "}",
            .param = "tool_choice.function.name",
            .code = ""},
        Refused{.name = "ToolChoiceRequiredWithoutTools",
                .body = R"({"model": "m", "tool_choice": "required", )" + kMsgs + "}",
                .param = "tool_choice",
                .code = ""},
        Refused{.name = "LegacyFunctions",
                .body = R"({"model": "m", "functions": [], )" + kMsgs + "}",
                .param = "functions",
                .code = "unsupported_parameter"},
        Refused{.name = "UnknownField",
                .body = R"({"model": "m", "temprature": 1, )" + kMsgs + "}",
                .param = "temprature",
                .code = "unknown_parameter"},
        Refused{.name = "NegativeTemperature",
                .body = R"({"model": "m", "temperature": -1, )" + kMsgs + "}",
                .param = "temperature",
                .code = ""},
        Refused{.name = "TemperatureString",
                .body = R"({"model": "m", "temperature": "hot", )" + kMsgs + "}",
                .param = "temperature",
                .code = ""},
        Refused{.name = "TopPZero",
                .body = R"({"model": "m", "top_p": 0, )" + kMsgs + "}",
                .param = "top_p",
                .code = ""},
        Refused{.name = "PenaltyOutOfRange",
                .body = R"({"model": "m", "presence_penalty": 3, )" + kMsgs + "}",
                .param = "presence_penalty",
                .code = ""},
        Refused{.name = "ZeroMaxTokens",
                .body = R"({"model": "m", "max_tokens": 0, )" + kMsgs + "}",
                .param = "max_tokens",
                .code = ""},
        Refused{.name = "FloatMaxTokens",
                .body = R"({"model": "m", "max_tokens": 1.5, )" + kMsgs + "}",
                .param = "max_tokens",
                .code = ""},
        Refused{.name = "TooManyStops",
                .body = R"({"model": "m", "stop": ["a","b","c","d","e"], )" + kMsgs + "}",
                .param = "stop",
                .code = ""},
        Refused{.name = "TopLogprobsWithoutLogprobs",
                .body = R"({"model": "m", "top_logprobs": 2, )" + kMsgs + "}",
                .param = "top_logprobs",
                .code = ""},
        Refused{.name = "TooManyTopLogprobs",
                .body = R"({"model": "m", "logprobs": true, "top_logprobs": 21, )" + kMsgs + "}",
                .param = "top_logprobs",
                .code = ""},
        Refused{
            .name = "StreamOptionsWithoutStream",
            .body = R"({"model": "m", "stream_options": {"include_usage": true}, )" + kMsgs + "}",
            .param = "stream_options",
            .code = ""},
        Refused{.name = "UnknownResponseFormat",
                .body = R"({"model": "m", "response_format": {"type": "xml"}, )" + kMsgs + "}",
                .param = "response_format.type",
                .code = ""},
        Refused{.name = "SchemaNotAnObject",
                .body = R"({"model": "m", "response_format": {"type": "json_schema",
                   "json_schema": {"name": "x", "schema": []}}, )" +
                        kMsgs + "}",
                .param = "response_format.json_schema.schema",
                .code = ""}),
    [](const ::testing::TestParamInfo<Refused>& param) { return std::string(param.param.name); });

TEST(OpenAiRequest, RefusesCompletionOnlyMistakes) {
  EXPECT_EQ(refusal(R"({"model": "m"})", Kind::text).param(), "prompt");
  EXPECT_EQ(refusal(R"({"model": "m", "prompt": ["a", "b"]})", Kind::text).param(), "prompt");
  EXPECT_EQ(refusal(R"({"model": "m", "prompt": ""})", Kind::text).param(), "prompt");
  EXPECT_EQ(refusal(R"({"model": "m", "prompt": "a", "echo": true})", Kind::text).param(), "echo");
  EXPECT_EQ(refusal(R"({"model": "m", "prompt": "a", "messages": []})", Kind::text).param(),
            "messages");
}

TEST(OpenAiRequest, ReadsEmbeddingInputsOfEveryShape) {
  auto call = parse_embedding_call(R"({"model": "e", "input": "one"})");
  EXPECT_EQ(call.texts, std::vector<std::string>{"one"});
  EXPECT_FALSE(call.base64);
  call =
      parse_embedding_call(R"({"model": "e", "input": ["a", "b"], "encoding_format": "base64"})");
  EXPECT_EQ(call.texts.size(), 2u);
  EXPECT_TRUE(call.base64);
  call = parse_embedding_call(R"({"model": "e", "input": [5, 6]})");
  EXPECT_EQ(call.token_inputs, (std::vector<std::vector<TokenId>>{{5, 6}}));
  call = parse_embedding_call(R"({"model": "e", "input": [[1], [2, 3]]})");
  EXPECT_EQ(call.token_inputs.size(), 2u);
}

TEST(OpenAiRequest, RefusesBadEmbeddingInputs) {
  for (const char* body :
       {R"({"model": "e"})", R"({"model": "e", "input": ""})", R"({"model": "e", "input": []})",
        R"({"model": "e", "input": [1, "a"]})", R"({"model": "e", "input": [4294967296]})",
        R"({"model": "e", "input": {}})"}) {
    try {
      (void)parse_embedding_call(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ApiError& error) {
      EXPECT_EQ(error.param(), "input") << body;
    }
  }
  try {
    (void)parse_embedding_call(R"({"model": "e", "input": "a", "encoding_format": "int8"})");
    ADD_FAILURE();
  } catch (const ApiError& error) {
    EXPECT_EQ(error.param(), "encoding_format");
  }
}

}  // namespace
}  // namespace baton
