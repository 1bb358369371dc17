// What the parsers of the peer APIs (Anthropic's Messages, OpenAI's Responses) share: a
// content field read as text, and the names the chat call's fields take in each API, so a
// 400 found on the chat call (a tool's schema, the conversation) names the field the
// client sent.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "baton/model/chat/chat_tools.h"
#include "baton/server/http/api_error.h"

namespace baton {

// 400 unsupported_parameter naming `param`: a field the API has that baton does not serve.
[[noreturn]] void refuse_unsupported(const std::string& param, const std::string& why);

// 400 naming `param`, which the request lacks.
[[noreturn]] void missing_field(const std::string& param);

// `where` + "[i]".
std::string indexed(const std::string& where, std::size_t i);

// A string, or a list of parts {"type", "text"} of the `allowed` types, as one text; a part
// of another type is refused (unsupported_parameter) naming `<where>[j].type`.
std::string content_text(const nlohmann::json& content, const std::string& where,
                         const std::set<std::string>& allowed, const char* kind);

// `error` naming `param` instead of its own field, where its message quotes the field too.
ApiError renamed_error(const ApiError& error, const std::string& param);

// A peer API's tool list as Chat Completions' tools: each entry converted by `chat_tool`
// (given the entry and its field, tools[i]), then checked (tool_fields.h) with the errors
// named as `rename` names the chat call's fields.
ChatTools peer_tools(const nlohmann::ordered_json& tools,
                     const std::function<nlohmann::ordered_json(const nlohmann::ordered_json&,
                                                                const std::string&)>& chat_tool,
                     const std::function<std::string(const std::string&)>& rename);

// A chat call's field as Anthropic's Messages names it: tools[i].function.parameters is
// tools[i].input_schema, tools[i].function.name tools[i].name, response_format.json_schema
// output_config.format; others are unchanged.
std::string anthropic_param(const std::string& chat_param);
// ... and as the Responses API names it: messages is input, tools[i].function.X
// tools[i].X, response_format.json_schema text.format.
std::string responses_param(const std::string& chat_param);

}  // namespace baton
