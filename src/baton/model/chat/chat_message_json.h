// A chat message as the dict a chat template receives, shaped as transformers passes an
// OpenAI message: {"role", "content"}, and only where present "tool_calls" (each {"id",
// "type": "function", "function": {"name", "arguments"}}), "tool_call_id" and "name".
// Keys that a message lacks stay out: templates test `'tool_calls' in message`.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "baton/model/chat/chat_message.h"

namespace baton {

// A call's arguments go as the dict they parse to, as transformers documents them; as the
// client's text when `arguments_as_text`, or when they are not a JSON object (or nest past
// 64 levels): the template then sees what the client sent.
nlohmann::ordered_json message_json(const ChatMessage& message, bool arguments_as_text);

// The arguments as a JSON object, or nullopt when they are not one (or nest too deep).
std::optional<nlohmann::ordered_json> arguments_object(const std::string& arguments);

}  // namespace baton
