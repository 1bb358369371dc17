// Server-sent events as the APIs frame them: OpenAI's chat and completions streams send
// each event as one `data: <json>` line and a blank line, and end with `data: [DONE]`;
// Anthropic's Messages and OpenAI's Responses streams name each event in an `event:` line
// before its data, and send no [DONE].
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace baton {

inline std::string sse_event(const std::string& data) { return "data: " + data + "\n\n"; }
inline std::string sse_done() { return "data: [DONE]\n\n"; }
inline std::string sse_named_event(std::string_view name, const std::string& data) {
  return "event: " + std::string(name) + "\ndata: " + data + "\n\n";
}

}  // namespace baton
