// The peer routes' requests with tools beyond Messages and Responses themselves: /tokenize
// renders a conversation with the tools a chat request would give (so a user sees the
// prompt), and Anthropic's final assistant message is a prefill to continue only when it
// made no call.
#include <gtest/gtest.h>

#include "baton/server/api/peer_requests.h"
#include "baton/server/http/api_error.h"

namespace baton::peer_requests_tools_test {
namespace {

TEST(PeerRequestsTools, TokenizeTakesToolsWithMessagesInTheClientsKeyOrder) {
  const TokenizeCall call = parse_tokenize_call(R"({"model": "m",
      "messages": [{"role": "user", "content": "q"},
                   {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": "r"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters":
                 {"type": "object", "properties": {"z": {}, "a": {}}}}}]})");
  ASSERT_EQ(call.tools.size(), 1u);
  EXPECT_EQ(call.tools[0]["function"]["parameters"].dump(),
            R"({"type":"object","properties":{"z":{},"a":{}}})");
  ASSERT_EQ(call.messages.size(), 3u);
  EXPECT_EQ(call.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(call.messages[2].tool_call_id, "c1");
  EXPECT_TRUE(parse_tokenize_call(R"({"model": "m", "messages": [{"role": "user",
                                      "content": "q"}]})")
                  .tools.empty());
}

TEST(PeerRequestsTools, TokenizeRefusesToolsNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"model": "m", "prompt": "p", "tools": []})", "tools"},
      {R"({"model": "m", "messages": [{"role": "user", "content": "q"}],
           "tools": [{"type": "function", "function": {}}]})",
       "tools[0].function.name"},
      {R"({"model": "m", "messages": [{"role": "user", "content": "q"}], "tools": {}})", "tools"},
  };
  for (const auto& [body, param] : cases) {
    try {
      (void)parse_tokenize_call(body);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ApiError& error) {
      EXPECT_EQ(error.status(), 400) << body;
      EXPECT_EQ(error.param(), param) << body;
    }
  }
}

TEST(PeerRequestsTools, AnAnthropicAssistantTurnThatCalledToolsIsNotAPrefill) {
  const std::string head = R"({"model": "m", "max_tokens": 9,
      "tools": [{"name": "f", "input_schema": {"type": "object"}}], "messages": [
      {"role": "user", "content": "q"}, )";
  EXPECT_EQ(parse_anthropic_call(head + R"({"role": "assistant", "content": [
      {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}]})")
                .chat_end,
            ChatEnd::open_reply);
  EXPECT_EQ(parse_anthropic_call(head + R"({"role": "assistant", "content": [
      {"type": "text", "text": "The answer is"}]}]})")
                .chat_end,
            ChatEnd::continue_last);
}

}  // namespace
}  // namespace baton::peer_requests_tools_test
