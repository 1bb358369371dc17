// Anthropic's answers with tools: the message's text block and tool_use blocks (ids,
// names, input objects in the model's key order, stop_reason "tool_use"), and the stream
// of blocks opened, filled and closed in order, whose input_json_delta fragments
// concatenate to each call's input, whatever pieces the text comes in.
#include <gtest/gtest.h>

#include "baton/server/api/anthropic_messages.h"
#include "server/sse_test_util.h"

namespace baton::anthropic_tool_format_test {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using testing::named_events;
using testing::names;
using testing::result_of;
using testing::streamed;

// A Hermes-format answer (Qwen 2.5, Hermes 3): text, then two calls.
const std::string kAnswer =
    "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\", "
    "\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": "
    "{}}\n</tool_call>";

TEST(AnthropicToolFormat, AMessageOfTextAndToolUseBlocks) {
  AnthropicFormat format("msg_7", "m", 10, ToolCallFormat::hermes);
  const std::string body = format.whole(result_of(kAnswer, FinishReason::stop));
  const ordered_json message = ordered_json::parse(body);
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["stop_reason"], "tool_use");
  EXPECT_TRUE(message["stop_sequence"].is_null());
  const ordered_json& content = message["content"];
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[0], ordered_json::parse(R"({"type": "text", "text": "Let me check.\n"})"));
  EXPECT_EQ(content[1]["type"], "tool_use");
  EXPECT_EQ(content[1]["id"], "toolu_7_0");
  EXPECT_EQ(content[1]["name"], "get_weather");
  EXPECT_EQ(content[1]["input"].dump(), R"({"unit":"c","city":"Paris"})");  // as written
  EXPECT_EQ(content[2]["id"], "toolu_7_1");
  EXPECT_EQ(content[2]["name"], "get_time");
  EXPECT_EQ(content[2]["input"], ordered_json::object());
  EXPECT_EQ(message["usage"]["output_tokens"], 4);
}

TEST(AnthropicToolFormat, WithoutCallsTheAnswerIsTextAndItsStopReason) {
  AnthropicFormat format("msg_8", "m", 10, ToolCallFormat::hermes);
  json message = json::parse(format.whole(result_of("It is sunny.", FinishReason::stop)));
  EXPECT_EQ(message["content"], json::parse(R"([{"type": "text", "text": "It is sunny."}])"));
  EXPECT_EQ(message["stop_reason"], "end_turn");
  message = json::parse(format.whole(result_of("", FinishReason::stop)));
  EXPECT_EQ(message["content"], json::parse(R"([{"type": "text", "text": ""}])"));
  // Cut off inside a call: the call is not whole, and the reason says why.
  message = json::parse(format.whole(result_of(kAnswer.substr(0, 60), FinishReason::length)));
  EXPECT_EQ(message["stop_reason"], "max_tokens");
  EXPECT_EQ(message["content"].size(), 1u);
}

TEST(AnthropicToolFormat, StreamsBlocksInOrderWithInputFragmentsThatMakeTheInput) {
  const ordered_json whole =
      ordered_json::parse(AnthropicFormat("msg_9", "m", 10, ToolCallFormat::hermes)
                              .whole(result_of(kAnswer, FinishReason::stop)))["content"];
  for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{7}, kAnswer.size()}) {
    AnthropicFormat format("msg_9", "m", 10, ToolCallFormat::hermes);
    const auto events = named_events(streamed(format, kAnswer, piece));
    ASSERT_GE(events.size(), 10u);
    EXPECT_EQ(events[0].name, "message_start");
    EXPECT_EQ(events[1].name, "ping");
    EXPECT_EQ(events[events.size() - 2].name, "message_delta");
    EXPECT_EQ(events.back().name, "message_stop");
    EXPECT_EQ(events[events.size() - 2].data["delta"]["stop_reason"], "tool_use");
    // Rebuild the blocks from the events, as the SDK's MessageStream does.
    std::vector<json> blocks;
    std::vector<std::string> partial;
    int open = -1;
    for (const auto& e : events) {
      EXPECT_EQ(e.data["type"], e.name);
      if (e.name == "content_block_start") {
        EXPECT_EQ(open, -1) << "a block opened before the last closed";
        open = e.data["index"];
        EXPECT_EQ(open, static_cast<int>(blocks.size()));
        blocks.push_back(e.data["content_block"]);
        partial.emplace_back();
      } else if (e.name == "content_block_delta") {
        ASSERT_EQ(e.data["index"], open);
        const json& delta = e.data["delta"];
        if (blocks[open]["type"] == "text") {
          EXPECT_EQ(delta["type"], "text_delta");
          blocks[open]["text"] =
              blocks[open]["text"].get<std::string>() + delta["text"].get<std::string>();
        } else {
          EXPECT_EQ(delta["type"], "input_json_delta");
          partial[open] += delta["partial_json"].get<std::string>();
        }
      } else if (e.name == "content_block_stop") {
        EXPECT_EQ(e.data["index"], open);
        open = -1;
      }
    }
    EXPECT_EQ(open, -1);
    ASSERT_EQ(blocks.size(), 3u) << "pieces of " << piece;
    // (json against ordered_json compares through a conversion g++ 13 finds ambiguous.)
    EXPECT_EQ(blocks[0]["text"].get<std::string>(), whole[0]["text"].get<std::string>());
    for (std::size_t b = 1; b < 3; ++b) {
      EXPECT_EQ(blocks[b]["id"].get<std::string>(), whole[b]["id"].get<std::string>());
      EXPECT_EQ(blocks[b]["name"].get<std::string>(), whole[b]["name"].get<std::string>());
      EXPECT_EQ(blocks[b]["input"], json::object());  // input comes as fragments
      EXPECT_EQ(ordered_json::parse(partial[b]).dump(), whole[b]["input"].dump())
          << "pieces of " << piece << ": " << partial[b];
    }
  }
}

TEST(AnthropicToolFormat, AStreamWithToolsButNoCallIsOneTextBlock) {
  for (const std::string& text : {std::string("It is sunny."), std::string()}) {
    AnthropicFormat format("msg_10", "m", 10, ToolCallFormat::hermes);
    const auto events = named_events(streamed(format, text, 4));
    std::vector<std::string> expected = {"message_start", "ping", "content_block_start"};
    for (std::size_t at = 0; at < text.size(); at += 4) expected.push_back("content_block_delta");
    expected.insert(expected.end(), {"content_block_stop", "message_delta", "message_stop"});
    EXPECT_EQ(names(events), expected) << text;
    EXPECT_EQ(events[2].data["content_block"], json::parse(R"({"type": "text", "text": ""})"));
    EXPECT_EQ(events[events.size() - 2].data["delta"]["stop_reason"], "end_turn");
  }
}

}  // namespace
}  // namespace baton::anthropic_tool_format_test
