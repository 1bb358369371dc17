// The messages of a conversation as a chat template receives them: OpenAI's chat messages
// (roles system, user, assistant and tool), with the assistant's tool calls and the tool
// results that answer them, as transformers' apply_chat_template takes them.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace baton {

// A call the assistant made, as OpenAI's tool_calls[i]: {"id", "type": "function",
// "function": {"name", "arguments"}}.
struct ToolCall {
  std::string id{};
  std::string name{};
  std::string arguments{};  // the arguments as JSON text, as the client sends them
};

struct ChatMessage {
  std::string role;  // system, user, assistant or tool
  // The text; an assistant message that only calls tools has "" (a client's null content
  // is passed as "": Qwen3's and Granite 3.3's templates fail on None, and no template in
  // tests/data renders the two apart).
  std::string content;
  std::vector<ToolCall> tool_calls{};  // assistant: the calls it made, in order
  std::string tool_call_id{};          // tool: the id of the call this message answers
  std::string name{};                  // tool: the function's name, where the client gives it
};

}  // namespace baton
