// The Responses API's answers with tools: a message item and function_call items (ids,
// call ids, names, arguments, status), the request's tool fields echoed, and the stream of
// items opened, filled and closed in order, with sequence numbers, whose
// function_call_arguments deltas concatenate to each call's arguments whatever pieces the
// text comes in, and whose final response lists the items as streamed.
#include <gtest/gtest.h>

#include "baton/server/api/responses_api.h"
#include "server/sse_test_util.h"

namespace baton::responses_tool_format_test {
namespace {

using nlohmann::json;
using testing::named_events;
using testing::names;
using testing::result_of;
using testing::streamed;

// A Hermes-format answer (Qwen 2.5, Hermes 3): text, then two calls.
const std::string kAnswer =
    "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\", "
    "\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": "
    "{}}\n</tool_call>";
const std::string kRequest = R"({"model": "m", "input": "q", "parallel_tool_calls": false,
    "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
              {"type": "function", "name": "get_time"}],
    "tool_choice": "required"})";

ResponsesFormat format_of(const std::string& body) {
  return ResponsesFormat(response_echo(parse_responses_call(body), "m", "u2", SamplingParams{}),
                         ToolCallFormat::hermes);
}

TEST(ResponsesToolFormat, OutputIsAMessageThenFunctionCallItems) {
  ResponsesFormat format = format_of(kRequest);
  const json body = json::parse(format.whole(result_of(kAnswer, FinishReason::stop)));
  EXPECT_EQ(body["status"], "completed");
  const json& output = body["output"];
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[0]["type"], "message");
  EXPECT_EQ(output[0]["id"], "msg_u2");
  EXPECT_EQ(output[0]["content"][0]["text"], "Let me check.\n");
  EXPECT_EQ(output[1], json::parse(R"({"type": "function_call", "id": "fc_u2_0",
      "call_id": "call_u2_0", "name": "get_weather",
      "arguments": "{\"unit\": \"c\", \"city\": \"Paris\"}", "status": "completed"})"));
  EXPECT_EQ(output[2]["id"], "fc_u2_1");
  EXPECT_EQ(output[2]["call_id"], "call_u2_1");
  EXPECT_EQ(output[2]["name"], "get_time");
  EXPECT_EQ(output[2]["arguments"], "{}");
  // The request's tool fields, echoed.
  EXPECT_EQ(body["tools"], json::parse(kRequest)["tools"]);
  EXPECT_EQ(body["tool_choice"], "required");
  EXPECT_EQ(body["parallel_tool_calls"], false);
  EXPECT_EQ(body["text"], json::parse(R"({"format": {"type": "text"}})"));

  // Only calls: no message item. No calls: the message alone.
  const std::string calls = kAnswer.substr(kAnswer.find("<tool_call>"));
  EXPECT_EQ(json::parse(format.whole(result_of(calls, FinishReason::stop)))["output"].size(), 2u);
  const json text = json::parse(format.whole(result_of("Sunny.", FinishReason::stop)))["output"];
  ASSERT_EQ(text.size(), 1u);
  EXPECT_EQ(text[0]["content"][0]["text"], "Sunny.");
}

TEST(ResponsesToolFormat, StreamsItemsInOrderWithArgumentsDeltasThatMakeTheArguments) {
  const json whole =
      json::parse(format_of(kRequest).whole(result_of(kAnswer, FinishReason::stop)))["output"];
  for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{7}, kAnswer.size()}) {
    ResponsesFormat format = format_of(kRequest);
    const auto events = named_events(streamed(format, kAnswer, piece));
    ASSERT_GE(events.size(), 10u);
    EXPECT_EQ(events[0].name, "response.created");
    EXPECT_EQ(events[1].name, "response.in_progress");
    EXPECT_EQ(events.back().name, "response.completed");
    // Rebuild the output from the events, as the SDK's ResponseStream does.
    json output = json::array();
    std::vector<std::string> done_arguments;
    bool open = false;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const auto& e = events[i];
      EXPECT_EQ(e.data["type"], e.name);
      EXPECT_EQ(e.data["sequence_number"], i);
      if (e.name == "response.output_item.added") {
        EXPECT_FALSE(open) << "an item opened before the last closed";
        open = true;
        EXPECT_EQ(e.data["output_index"], output.size());
        EXPECT_EQ(e.data["item"]["status"], "in_progress");
        output.push_back(e.data["item"]);
        if (output.back()["type"] == "message") output.back()["content"] = json::array({""});
      } else if (e.name == "response.output_text.delta") {
        ASSERT_TRUE(open);
        EXPECT_EQ(e.data["item_id"], output.back()["id"]);
        EXPECT_EQ(e.data["output_index"], output.size() - 1);
        output.back()["content"][0] =
            output.back()["content"][0].get<std::string>() + e.data["delta"].get<std::string>();
      } else if (e.name == "response.function_call_arguments.delta") {
        ASSERT_TRUE(open);
        EXPECT_EQ(e.data["item_id"], output.back()["id"]);
        EXPECT_EQ(e.data["output_index"], output.size() - 1);
        output.back()["arguments"] =
            output.back()["arguments"].get<std::string>() + e.data["delta"].get<std::string>();
      } else if (e.name == "response.function_call_arguments.done") {
        EXPECT_EQ(e.data["item_id"], output.back()["id"]);
        EXPECT_EQ(e.data["name"], output.back()["name"]);
        done_arguments.push_back(e.data["arguments"]);
      } else if (e.name == "response.output_item.done") {
        EXPECT_EQ(e.data["output_index"], output.size() - 1);
        EXPECT_EQ(e.data["item"]["status"], "completed");
        EXPECT_EQ(e.data["item"], whole[output.size() - 1]);
        open = false;
      }
    }
    EXPECT_FALSE(open);
    ASSERT_EQ(output.size(), 3u) << "pieces of " << piece;
    EXPECT_EQ(output[0]["content"][0], whole[0]["content"][0]["text"]);
    for (std::size_t k = 1; k < 3; ++k) {
      EXPECT_EQ(output[k]["id"], whole[k]["id"]);
      EXPECT_EQ(output[k]["call_id"], whole[k]["call_id"]);
      EXPECT_EQ(output[k]["name"], whole[k]["name"]);
      EXPECT_EQ(output[k]["arguments"], whole[k]["arguments"]) << "pieces of " << piece;
      EXPECT_EQ(done_arguments[k - 1], whole[k]["arguments"].get<std::string>());
    }
    EXPECT_EQ(events.back().data["response"]["output"], whole);
  }
}

TEST(ResponsesToolFormat, AStreamWithToolsButNoCallIsOneMessage) {
  for (const FinishReason finish : {FinishReason::stop, FinishReason::length}) {
    ResponsesFormat format = format_of(kRequest);
    const auto events = named_events(streamed(format, "Sunny.", 100, finish));
    const std::string last =
        finish == FinishReason::stop ? "response.completed" : "response.incomplete";
    EXPECT_EQ(names(events), (std::vector<std::string>{
                                 "response.created", "response.in_progress",
                                 "response.output_item.added", "response.content_part.added",
                                 "response.output_text.delta", "response.output_text.done",
                                 "response.content_part.done", "response.output_item.done", last}));
    const json& item = events[7].data["item"];
    EXPECT_EQ(item["status"], finish == FinishReason::stop ? "completed" : "incomplete");
    EXPECT_EQ(item["content"][0]["text"], "Sunny.");
    EXPECT_EQ(events.back().data["response"]["output"], json::array({item}));
  }
  ResponsesFormat empty = format_of(kRequest);
  const auto events = named_events(streamed(empty, "", 1));
  EXPECT_EQ(names(events).size(), 8u);  // the empty message's events, then completed
  EXPECT_EQ(events.back().data["response"]["output"][0]["content"][0]["text"], "");
}

}  // namespace
}  // namespace baton::responses_tool_format_test
