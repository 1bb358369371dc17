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
                .body = R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})",
                .param = "messages[0].role",
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
        Refused{.name = "Tools",
                .body = R"({"model": "m", "tools": [], )" + kMsgs + "}",
                .param = "tools",
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
        Refused{
            .name = "JsonMode",
            .body = R"({"model": "m", "response_format": {"type": "json_object"}, )" + kMsgs + "}",
            .param = "response_format",
            .code = "unsupported_parameter"}),
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
