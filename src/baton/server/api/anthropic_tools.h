// The tool use of Anthropic's Messages API read into the chat call (peer_requests.h):
// `tools` ({name, description, input_schema}; server tools refused) as the OpenAI-shaped
// tools the chat template and the grammar take, `tool_choice` (auto, any, tool, none;
// disable_parallel_tool_use), the turns with their tool_use and tool_result blocks as chat
// messages, and output_config.format (a JSON schema the answer must follow). Every mistake
// is a 400 naming Anthropic's field (tools[2].name, messages[3].content[0].tool_use_id).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "baton/engine/output/output_request.h"
#include "baton/model/chat/chat_message.h"

namespace baton {

// `tools` and `tool_choice` of the request `object`; `body` is what it was read from (the
// tools keep their keys in the client's order).
ToolUse anthropic_tool_use(const nlohmann::json& object, std::string_view body);

// The turns of `messages` (user and assistant; content a string or a list of blocks)
// appended to `out`. An assistant's tool_use blocks {id, name, input} are its tool_calls
// (arguments: input as JSON text, keys in the client's order, from `ordered`, the same
// list); a user's tool_result blocks {tool_use_id, content, is_error} are tool messages,
// one per block in order, each answering an earlier tool_use (named by its id), then the
// user's text, if any, as a user message. An error result's content starts "Error: ".
void append_anthropic_turns(const nlohmann::json& messages, const nlohmann::ordered_json& ordered,
                            std::vector<ChatMessage>& out);

// output_config: {"format": {"type": "json_schema", "schema": {...}}} (or no format);
// `effort` is refused.
ResponseFormat anthropic_output_format(const nlohmann::json& object, std::string_view body);

}  // namespace baton
