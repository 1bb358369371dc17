// The request fields of OpenAI's Responses API (peer_requests.h) that become the chat
// call's conversation, tools and answer format: `input` items (messages with input_text /
// output_text parts; function_call items, consecutive ones joining one assistant message's
// tool_calls; function_call_output items as tool messages, each answering an earlier call
// by call_id), function `tools` ({type: "function", name, description, parameters,
// strict}; other tool types refused) in OpenAI's chat shape, `tool_choice`,
// `parallel_tool_calls`, and `text.format` (text, json_object, json_schema {name, schema,
// strict}). Every mistake is a 400 naming the Responses field (input[3].call_id,
// tools[1].parameters, text.format.schema).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "baton/engine/output/output_request.h"
#include "baton/model/chat/chat_message.h"

namespace baton {

// The items of a list `input`, in order, appended to `out`.
void append_response_items(const nlohmann::json& input, std::vector<ChatMessage>& out);

// `tools`, `tool_choice` and `parallel_tool_calls` of the request `object`, read from
// `body` (the tools keep their keys in the client's order).
ToolUse responses_tool_use(const nlohmann::json& object, std::string_view body);

// `text`'s format; text when absent.
ResponseFormat responses_text_format(const nlohmann::json& object, std::string_view body);

}  // namespace baton
