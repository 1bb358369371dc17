// Server-sent events as the OpenAI streaming API frames them: each event one
// `data: <json>` line and a blank line, the stream ended by `data: [DONE]`.
// Thread-safety: pure functions.
#pragma once

#include <string>

namespace baton {

inline std::string sse_event(const std::string& data) { return "data: " + data + "\n\n"; }
inline std::string sse_done() { return "data: [DONE]\n\n"; }

}  // namespace baton
