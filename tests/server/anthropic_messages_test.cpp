// Anthropic's Messages API: every request field baton reads and every refusal, the message
// and its stop reasons, the stream's events in Anthropic's order, and the error shape.
#include "baton/server/api/anthropic_messages.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "baton/server/api/peer_requests.h"
#include "model/llama3_tokenizer.h"
#include "server/sse_test_util.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::named_events;
using testing::names;

ApiError messages_refusal(const std::string& body) {
  try {
    (void)parse_anthropic_call(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

// A result whose tokens spell `all` and whose text is its first `text_size` bytes.
GenerationResult result_of(const std::string& all, std::size_t text_size, FinishReason finish) {
  GenerationResult result;
  result.tokens = testing::llama3_tokenizer().encode(all);
  result.text = all.substr(0, text_size);
  result.finish = finish;
  result.prompt_tokens = 20;
  result.cached_prompt_tokens = 16;
  return result;
}

TEST(AnthropicRequest, ReadsEveryFieldIntoAChatCall) {
  const CompletionCall call = parse_anthropic_call(R"({
    "model": "m", "max_tokens": 9, "system": [{"type": "text", "text": "be "},
                                              {"type": "text", "text": "brief"}],
    "messages": [{"role": "user", "content": "a"},
                 {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
                 {"role": "user", "content": [{"type": "text", "text": "c",
                                               "cache_control": {"type": "ephemeral"}}]}],
    "stop_sequences": ["x", "y"], "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "stream": true, "metadata": {"user_id": "u"}, "thinking": {"type": "disabled"}})");
  EXPECT_EQ(call.kind, CompletionCall::Kind::chat);
  EXPECT_EQ(call.model, "m");
  EXPECT_EQ(call.max_tokens, 9);
  ASSERT_EQ(call.messages.size(), 4u);
  EXPECT_EQ(call.messages[0].role, "system");
  EXPECT_EQ(call.messages[0].content, "be brief");
  EXPECT_EQ(call.messages[2].role, "assistant");
  EXPECT_EQ(call.messages[2].content, "b");
  EXPECT_EQ(call.messages[3].content, "c");
  EXPECT_EQ(call.stop, (std::vector<std::string>{"x", "y"}));
  EXPECT_DOUBLE_EQ(*call.sampling.temperature, 0.5);
  EXPECT_DOUBLE_EQ(*call.sampling.top_p, 0.9);
  EXPECT_EQ(call.sampling.top_k, 40);
  EXPECT_TRUE(call.stream);
  EXPECT_EQ(parse_anthropic_call(R"({"model": "m", "max_tokens": 1, "system": "s",
                                     "messages": [{"role": "user", "content": "q"}]})")
                .messages[0]
                .content,
            "s");
}

TEST(AnthropicRequest, AFinalAssistantMessageIsAPrefillToContinue) {
  const std::string head = R"({"model": "m", "max_tokens": 9, "messages": [{"role": "user",
                                                                            "content": "q"})";
  EXPECT_EQ(parse_anthropic_call(head + "]}").chat_end, ChatEnd::open_reply);
  EXPECT_EQ(parse_anthropic_call(head + R"(, {"role": "assistant", "content": "The"}]})").chat_end,
            ChatEnd::continue_last);
}

TEST(AnthropicRequest, RefusesWhatItCannotDoNamingTheField) {
  const std::string head = R"({"model": "m", "max_tokens": 5, )";
  const std::string user = R"("messages": [{"role": "user", "content": "q"}])";
  struct Case {
    std::string body;
    std::string param;
    std::optional<std::string> code;
  };
  const std::vector<Case> cases = {
      {.body = R"({"model": "m", )" + user + "}", .param = "max_tokens", .code = std::nullopt},
      {.body = head + R"("messages": []})", .param = "messages", .code = std::nullopt},
      {.body = head + R"("messages": [{"role": "system", "content": "q"}]})",
       .param = "messages[0].role",
       .code = std::nullopt},
      {.body = head +
               R"("messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]})",
       .param = "messages[0].content[0].type",
       .code = "unsupported_parameter"},
      {.body =
           head + user + R"(, "tools": [{"type": "web_search_20250305", "name": "web_search"}]})",
       .param = "tools[0].type",
       .code = "unsupported_parameter"},
      {.body = head + user + R"(, "temperature": 1.5})",
       .param = "temperature",
       .code = std::nullopt},
      {.body = head + user + R"(, "thinking": {"type": "enabled", "budget_tokens": 10}})",
       .param = "thinking",
       .code = "unsupported_parameter"},
      {.body = head + user + R"(, "stop_sequences": "x"})",
       .param = "stop_sequences",
       .code = std::nullopt},
      {.body = head + user + R"(, "system": [{"type": "image"}]})",
       .param = "system[0].type",
       .code = "unsupported_parameter"},
      {.body = head + user + R"(, "n": 2})", .param = "n", .code = "unknown_parameter"},
  };
  for (const Case& c : cases) {
    const ApiError error = messages_refusal(c.body);
    EXPECT_EQ(error.status(), 400) << c.body;
    EXPECT_EQ(error.param(), c.param) << c.body;
    if (c.code) {
      EXPECT_EQ(error.code(), c.code) << c.body;
    }
  }
}

TEST(AnthropicFormat, AMessageWithItsStopReasonAndUsage) {
  AnthropicFormat format("msg_1", "m", 20);
  GenerationResult stopped = result_of("hello STOP more", 6, FinishReason::stop);
  stopped.stop_sequence = "STOP";  // what the engine's StopChecker found
  json body = json::parse(format.whole(stopped));
  EXPECT_EQ(body["id"], "msg_1");
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["content"], json::parse(R"([{"type": "text", "text": "hello "}])"));
  EXPECT_EQ(body["stop_reason"], "stop_sequence");
  EXPECT_EQ(body["stop_sequence"], "STOP");
  // Anthropic's meaning: input_tokens are those not read from the cache.
  EXPECT_EQ(body["usage"]["input_tokens"], 4);
  EXPECT_EQ(body["usage"]["cache_read_input_tokens"], 16);
  EXPECT_EQ(body["usage"]["output_tokens"],
            testing::llama3_tokenizer().encode("hello STOP more").size());

  body = json::parse(format.whole(result_of("hello", 5, FinishReason::stop)));
  EXPECT_EQ(body["stop_reason"], "end_turn");
  EXPECT_TRUE(body["stop_sequence"].is_null());
  body = json::parse(format.whole(result_of("hello", 5, FinishReason::length)));
  EXPECT_EQ(body["stop_reason"], "max_tokens");
}

TEST(AnthropicFormat, StreamsTheEventsInAnthropicsOrder) {
  AnthropicFormat format("msg_2", "m", 20);
  TokenDelta held_back;  // text not final yet: no event
  TokenDelta a;
  a.text = "he";
  TokenDelta b;
  b.text = "llo";
  b.finish = FinishReason::length;
  std::string body = format.stream_open();
  body += format.stream_token(a);
  body += format.stream_token(held_back);
  body += format.stream_token(b);
  body += format.stream_close(result_of("hello", 5, FinishReason::length));
  const auto events = named_events(body);
  EXPECT_EQ(names(events),
            (std::vector<std::string>{"message_start", "content_block_start", "ping",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  for (const auto& e : events) EXPECT_EQ(e.data["type"], e.name);
  const json& message = events[0].data["message"];
  EXPECT_EQ(message["id"], "msg_2");
  EXPECT_EQ(message["content"], json::array());
  EXPECT_TRUE(message["stop_reason"].is_null());
  EXPECT_EQ(message["usage"]["input_tokens"], 20);
  EXPECT_EQ(events[1].data["content_block"], json::parse(R"({"type": "text", "text": ""})"));
  EXPECT_EQ(events[3].data["delta"], json::parse(R"({"type": "text_delta", "text": "he"})"));
  EXPECT_EQ(events[4].data["index"], 0);
  EXPECT_EQ(events[6].data["delta"]["stop_reason"], "max_tokens");
  EXPECT_TRUE(events[6].data["delta"]["stop_sequence"].is_null());
  EXPECT_EQ(events[6].data["usage"]["output_tokens"],
            testing::llama3_tokenizer().encode("hello").size());
}

TEST(AnthropicFormat, ErrorsInAnthropicsShapeWithStatusAndRetryAfter) {
  EXPECT_EQ(anthropic_error_type(400), "invalid_request_error");
  EXPECT_EQ(anthropic_error_type(401), "authentication_error");
  EXPECT_EQ(anthropic_error_type(404), "not_found_error");
  EXPECT_EQ(anthropic_error_type(413), "request_too_large");
  EXPECT_EQ(anthropic_error_type(429), "rate_limit_error");
  EXPECT_EQ(anthropic_error_type(500), "api_error");
  EXPECT_EQ(anthropic_error_type(503), "overloaded_error");

  AnthropicFormat format("msg_3", "m", 1);
  ApiError full(429, "queue full", "rate_limit_error", "queue_full");
  full.with_retry_after(2);
  const HttpResponse response = format.error_response(full);
  EXPECT_EQ(response.head.status, 429);
  ASSERT_EQ(response.head.headers.size(), 1u);
  EXPECT_EQ(response.head.headers[0], (std::pair<std::string, std::string>{"Retry-After", "2"}));
  EXPECT_EQ(json::parse(response.body), json::parse(R"({"type": "error", "error":
      {"type": "rate_limit_error", "message": "queue full"}})"));

  const auto events = named_events(format.stream_error(ApiError(503, "hung", "server_error")));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "error");
  EXPECT_EQ(events[0].data["type"], "error");
  EXPECT_EQ(events[0].data["error"]["type"], "overloaded_error");
  EXPECT_EQ(events[0].data["error"]["message"], "hung");
}

}  // namespace
}  // namespace baton
