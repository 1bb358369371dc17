// vLLM's /tokenize and /detokenize bodies, and OpenAI's chat and completions stream in the
// pluggable format CompletionStream uses (OpenAiFormat).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baton/server/api/completion_format.h"
#include "baton/server/api/json_fields.h"
#include "baton/server/api/peer_requests.h"
#include "baton/server/http/sse.h"
#include "model/llama3_tokenizer.h"

namespace baton {
namespace {

using nlohmann::json;

template <typename Parse>
ApiError refusal(Parse parse, const std::string& body) {
  try {
    (void)parse(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

TEST(TokenizeRequest, APromptOrMessages) {
  TokenizeCall call = parse_tokenize_call(R"({"model": "m", "prompt": "hello"})");
  EXPECT_EQ(call.model, "m");
  EXPECT_EQ(call.prompt, "hello");
  EXPECT_TRUE(call.messages.empty());
  call = parse_tokenize_call(R"({"model": "m", "add_generation_prompt": true,
      "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]})");
  EXPECT_FALSE(call.prompt.has_value());
  ASSERT_EQ(call.messages.size(), 2u);
  EXPECT_EQ(call.messages[1].content, "u");
  EXPECT_EQ(call.chat_end, ChatEnd::open_reply);
  call = parse_tokenize_call(R"({"model": "m", "add_generation_prompt": false,
      "messages": [{"role": "user", "content": "u"}]})");
  EXPECT_EQ(call.chat_end, ChatEnd::as_is);
}

TEST(TokenizeRequest, RefusalsNameTheField) {
  const auto tokenize = [](const std::string& b) { return parse_tokenize_call(b); };
  EXPECT_EQ(refusal(tokenize, R"({"model": "m"})").param(), "prompt");
  EXPECT_EQ(refusal(tokenize, R"({"model": "m", "prompt": "a", "messages": []})").param(),
            "messages");
  EXPECT_EQ(
      refusal(tokenize, R"({"model": "m", "messages": [{"role": "x", "content": "a"}]})").param(),
      "messages[0].role");
  EXPECT_EQ(refusal(tokenize, R"({"model": "m", "prompt": "a", "add_generation_prompt": false})")
                .param(),
            "add_generation_prompt");
  EXPECT_EQ(refusal(tokenize, R"({"prompt": "a"})").param(), "model");
  EXPECT_EQ(refusal(tokenize, R"({"model": "m", "prompt": 3})").param(), "prompt");
  EXPECT_EQ(refusal(tokenize, R"({"model": "m", "prompt": "a", "extra": 1})").param(), "extra");
}

TEST(DetokenizeRequest, TokenIdsAndTheirRefusals) {
  DetokenizeCall call = parse_detokenize_call(R"({"model": "m", "tokens": [1, 2, 3]})");
  EXPECT_EQ(call.tokens, (std::vector<TokenId>{1, 2, 3}));
  EXPECT_TRUE(parse_detokenize_call(R"({"model": "m", "tokens": []})").tokens.empty());
  const auto detokenize = [](const std::string& b) { return parse_detokenize_call(b); };
  for (const char* body : {R"({"model": "m"})", R"({"model": "m", "tokens": [1.5]})",
                           R"({"model": "m", "tokens": "a"})",
                           R"({"model": "m", "tokens": [4294967296]})"}) {
    const ApiError error = refusal(detokenize, body);
    EXPECT_EQ(error.status(), 400) << body;
    EXPECT_EQ(error.param(), "tokens") << body;
  }
  // A negative id parses: the route refuses it against the model's vocabulary.
  EXPECT_EQ(parse_detokenize_call(R"({"model": "m", "tokens": [-1]})").tokens,
            std::vector<TokenId>{-1});
}

TEST(CheckVocabulary, NamesTheIdItsIndexAndTheModelsRange) {
  json_fields::check_vocabulary({0, 4095}, 4096, "tokens", "m");
  for (const TokenId bad : {-1, 4096}) {
    try {
      json_fields::check_vocabulary({3, bad}, 4096, "prompt", "m");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ApiError& error) {
      EXPECT_EQ(error.status(), 400);
      EXPECT_EQ(error.param(), "prompt");
      const std::string message = error.what();
      EXPECT_NE(message.find("token id " + std::to_string(bad) + " (prompt[1])"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("ids are 0 to 4095"), std::string::npos) << message;
    }
  }
}

// Named apart from the other test files' tokenizer(): a unity batch may hold two of them.
const BpeTokenizer& llama3() { return testing::llama3_tokenizer(); }

TEST(OpenAiFormat, ChatStreamsTheRoleFirstThenDeltasUsageAndDone) {
  OpenAiFormat format(
      {.kind = CompletionCall::Kind::chat, .id = "chatcmpl-1", .created = 1, .model = "m"}, true,
      false, llama3());
  TokenDelta a;
  a.text = "hi";
  a.finish = FinishReason::stop;
  GenerationResult result;
  result.tokens = {4, 5};
  result.text = "hi";
  result.finish = FinishReason::stop;
  result.prompt_tokens = 3;
  std::string body = format.stream_open();
  body += format.stream_token(TokenDelta{});  // a token whose text is not out yet
  body += format.stream_token(a);
  body += format.stream_close(result);
  const std::string role = R"("role":"assistant")";
  ASSERT_EQ(body.rfind("data: ", 0), 0u);
  EXPECT_NE(body.substr(0, body.find("\n\n")).find(role), std::string::npos);
  EXPECT_NE(body.find(R"("finish_reason":"stop")"), std::string::npos);
  EXPECT_NE(body.find(R"("completion_tokens":2)"), std::string::npos);
  EXPECT_TRUE(body.ends_with(sse_done()));
  // Four events: role, one per token (the first with empty content), usage: a client that
  // counts the token chunks counts what usage says.
  std::size_t events = 0;
  for (std::size_t at = 0; (at = body.find("data: {", at)) != std::string::npos; ++at) ++events;
  EXPECT_EQ(events, 4u);
  EXPECT_NE(body.find(R"("delta":{"content":""})"), std::string::npos) << body;
  EXPECT_EQ(format.stream_error(ApiError(500, "x", "server_error")),
            sse_event(ApiError(500, "x", "server_error").body()) + sse_done());

  OpenAiFormat text(
      {.kind = CompletionCall::Kind::text, .id = "cmpl-1", .created = 1, .model = "m"}, false,
      false, llama3());
  EXPECT_EQ(text.stream_open(), "");
  EXPECT_EQ(json::parse(text.whole(result))["choices"][0]["text"], "hi");
}

}  // namespace
}  // namespace baton
