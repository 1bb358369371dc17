// OpenAI's Responses API, stateless: the request fields and refusals, the response object
// (completed or incomplete), the stream's events in order with their sequence numbers, and
// an error after the head.
#include "baton/server/api/responses_api.h"

#include <gtest/gtest.h>

#include "baton/server/api/peer_requests.h"
#include "server/sse_test_util.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::named_events;
using testing::names;

ApiError responses_refusal(const std::string& body) {
  try {
    (void)parse_responses_call(body);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "", "");
}

GenerationResult result_of(const std::string& text, FinishReason finish) {
  GenerationResult result;
  result.tokens = {1, 2, 3};
  result.text = text;
  result.finish = finish;
  result.prompt_tokens = 10;
  result.cached_prompt_tokens = 4;
  return result;
}

ResponseEcho echo_of(const std::string& body) {
  SamplingParams sampling;
  sampling.temperature = 0.25;
  sampling.top_p = 0.5;
  return response_echo(parse_responses_call(body), "m", "u1", sampling);
}

TEST(ResponsesRequest, ReadsInputInstructionsAndOptions) {
  const ResponsesCall call = parse_responses_call(R"({
    "model": "m", "instructions": "be brief",
    "input": [{"role": "developer", "content": "rules"},
              {"role": "user", "content": [{"type": "input_text", "text": "a"},
                                           {"type": "input_text", "text": "b"}]},
              {"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "c", "annotations": []}]},
              {"role": "user", "content": "d"}],
    "max_output_tokens": 7, "temperature": 0.5, "top_p": 0.9, "stream": true,
    "store": true, "metadata": {"k": "v"}, "user": "me", "tools": [], "tool_choice": "auto",
    "text": {"format": {"type": "text"}}, "truncation": "disabled", "parallel_tool_calls": true})");
  EXPECT_EQ(call.call.model, "m");
  ASSERT_EQ(call.call.messages.size(), 5u);
  EXPECT_EQ(call.call.messages[0].role, "system");
  EXPECT_EQ(call.call.messages[0].content, "be brief");
  EXPECT_EQ(call.call.messages[1].role, "system");
  EXPECT_EQ(call.call.messages[2].content, "ab");
  EXPECT_EQ(call.call.messages[3].role, "assistant");
  EXPECT_EQ(call.call.messages[4].content, "d");
  EXPECT_EQ(call.call.max_tokens, 7);
  EXPECT_DOUBLE_EQ(*call.call.sampling.temperature, 0.5);
  EXPECT_TRUE(call.call.stream);
  EXPECT_TRUE(call.store);
  EXPECT_EQ(call.instructions, "be brief");
  EXPECT_EQ(call.user, "me");
  ASSERT_EQ(call.metadata.size(), 1u);

  const ResponsesCall plain = parse_responses_call(R"({"model": "m", "input": "hi"})");
  ASSERT_EQ(plain.call.messages.size(), 1u);
  EXPECT_EQ(plain.call.messages[0].role, "user");
  EXPECT_EQ(plain.call.messages[0].content, "hi");
  EXPECT_FALSE(plain.call.max_tokens.has_value());
  EXPECT_FALSE(plain.call.stream);
}

TEST(ResponsesRequest, RefusesStateToolsAndOtherInputsNamingTheField) {
  const std::string head = R"({"model": "m", )";
  struct Case {
    std::string body;
    std::string param;
    std::optional<std::string> code;
  };
  const std::vector<Case> cases = {
      {.body = head + R"("input": "x", "previous_response_id": "resp_1"})",
       .param = "previous_response_id",
       .code = "unsupported_parameter"},
      {.body = head + R"("input": "x", "tools": [{"type": "web_search_preview"}]})",
       .param = "tools[0].type",
       .code = "unsupported_parameter"},
      {.body = head + R"("input": [{"role": "user", "content": [{"type": "input_image"}]}]})",
       .param = "input[0].content[0].type",
       .code = "unsupported_parameter"},
      {.body = head + R"("input": [{"type": "reasoning", "summary": []}]})",
       .param = "input[0].type",
       .code = "unsupported_parameter"},
      {.body = head + R"("input": [{"role": "tool", "content": "x"}]})",
       .param = "input[0].role",
       .code = std::nullopt},
      {.body = head + R"("input": ""})", .param = "input", .code = std::nullopt},
      {.body = head + R"("input": "x", "max_output_tokens": 0})",
       .param = "max_output_tokens",
       .code = std::nullopt},
      {.body = head + R"("input": "x", "text": {"format": {"type": "grammar"}}})",
       .param = "text.format.type",
       .code = "unsupported_parameter"},
      {.body = head + R"("input": "x", "stream_options": {"include_obfuscation": false}})",
       .param = "stream_options",
       .code = std::nullopt},
      {.body = head + R"("input": "x", "seed": 1})", .param = "seed", .code = "unknown_parameter"},
      {.body = R"({"input": "x"})", .param = "model", .code = std::nullopt},
  };
  for (const Case& c : cases) {
    const ApiError error = responses_refusal(c.body);
    EXPECT_EQ(error.status(), 400) << c.body;
    EXPECT_EQ(error.param(), c.param) << c.body;
    if (c.code) {
      EXPECT_EQ(error.code(), c.code) << c.body;
    }
  }
}

TEST(ResponsesFormat, ACompletedOrIncompleteResponseObject) {
  ResponsesFormat format(echo_of(R"({"model": "m", "input": "x", "instructions": "i",
                                     "metadata": {"k": "v"}})"));
  json body = json::parse(format.whole(result_of("hi", FinishReason::stop)));
  EXPECT_EQ(body["id"], "resp_u1");
  EXPECT_EQ(body["object"], "response");
  EXPECT_GT(body["created_at"].get<std::int64_t>(), 1'600'000'000);
  EXPECT_EQ(body["status"], "completed");
  EXPECT_TRUE(body["incomplete_details"].is_null());
  EXPECT_TRUE(body["error"].is_null());
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["instructions"], "i");
  EXPECT_EQ(body["store"], false);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.5);
  EXPECT_EQ(body["metadata"], json::parse(R"({"k": "v"})"));
  ASSERT_EQ(body["output"].size(), 1u);
  const json& item = body["output"][0];
  EXPECT_EQ(item["type"], "message");
  EXPECT_EQ(item["id"], "msg_u1");
  EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(item["role"], "assistant");
  EXPECT_EQ(item["content"][0]["type"], "output_text");
  EXPECT_EQ(item["content"][0]["text"], "hi");
  EXPECT_EQ(item["content"][0]["annotations"], json::array());
  EXPECT_EQ(body["usage"], json::parse(R"({"input_tokens": 10, "output_tokens": 3,
      "total_tokens": 13, "input_tokens_details": {"cached_tokens": 4},
      "output_tokens_details": {"reasoning_tokens": 0}})"));

  body = json::parse(format.whole(result_of("hi", FinishReason::length)));
  EXPECT_EQ(body["status"], "incomplete");
  EXPECT_EQ(body["incomplete_details"], json::parse(R"({"reason": "max_output_tokens"})"));
  EXPECT_EQ(body["output"][0]["status"], "incomplete");
}

TEST(ResponsesFormat, StreamsEveryEventInOrderWithSequenceNumbers) {
  for (const FinishReason finish : {FinishReason::stop, FinishReason::length}) {
    ResponsesFormat format(echo_of(R"({"model": "m", "input": "x"})"));
    TokenDelta a;
    a.text = "h";
    TokenDelta held_back;
    TokenDelta b;
    b.text = "i";
    // One call after the other: each event takes the next sequence number.
    std::string body = format.stream_open();
    body += format.stream_token(a);
    body += format.stream_token(held_back);
    body += format.stream_token(b);
    body += format.stream_close(result_of("hi", finish));
    const auto events = named_events(body);
    const std::string last =
        finish == FinishReason::stop ? "response.completed" : "response.incomplete";
    EXPECT_EQ(names(events),
              (std::vector<std::string>{"response.created", "response.in_progress",
                                        "response.output_item.added", "response.content_part.added",
                                        "response.output_text.delta", "response.output_text.delta",
                                        "response.output_text.done", "response.content_part.done",
                                        "response.output_item.done", last}));
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].data["type"], events[i].name);
      EXPECT_EQ(events[i].data["sequence_number"], i) << events[i].name;
    }
    EXPECT_EQ(events[0].data["response"]["status"], "in_progress");
    EXPECT_EQ(events[0].data["response"]["output"], json::array());
    EXPECT_EQ(events[2].data["item"]["status"], "in_progress");
    EXPECT_EQ(events[2].data["item"]["content"], json::array());
    EXPECT_EQ(events[3].data["part"]["text"], "");
    EXPECT_EQ(events[4].data["delta"], "h");
    EXPECT_EQ(events[4].data["item_id"], "msg_u1");
    EXPECT_EQ(events[4].data["output_index"], 0);
    EXPECT_EQ(events[4].data["content_index"], 0);
    EXPECT_EQ(events[6].data["text"], "hi");
    EXPECT_EQ(events[7].data["part"]["text"], "hi");
    EXPECT_EQ(events[8].data["item"]["content"][0]["text"], "hi");
    EXPECT_EQ(events[9].data["response"]["output"][0]["content"][0]["text"], "hi");
    EXPECT_EQ(events[9].data["response"]["usage"]["total_tokens"], 13);
  }
}

TEST(ResponsesFormat, AnErrorAfterTheHeadIsAnErrorEventThenResponseFailed) {
  ResponsesFormat format(echo_of(R"({"model": "m", "input": "x"})"));
  const std::string opened = format.stream_open();
  const auto events = named_events(
      format.stream_error(ApiError(503, "engine hung", "server_error", "engine_unavailable")));
  ASSERT_EQ(names(events), (std::vector<std::string>{"error", "response.failed"}));
  EXPECT_EQ(events[0].data["sequence_number"], 4);
  EXPECT_EQ(events[0].data["message"], "engine hung");
  EXPECT_EQ(events[0].data["code"], "engine_unavailable");
  EXPECT_TRUE(events[0].data["param"].is_null());
  EXPECT_EQ(events[0].data["error"]["message"], "engine hung");
  EXPECT_EQ(events[1].data["response"]["status"], "failed");
  EXPECT_EQ(events[1].data["response"]["error"]["message"], "engine hung");

  // Before the head: an HTTP error in OpenAI's shape.
  const HttpResponse response = format.error_response(bad_parameter("input", "too long"));
  EXPECT_EQ(response.head.status, 400);
  EXPECT_EQ(json::parse(response.body)["error"]["param"], "input");
}

}  // namespace
}  // namespace baton
