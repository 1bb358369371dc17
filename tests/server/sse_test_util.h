// Test helpers: a body of named server-sent events (`event: NAME\ndata: JSON\n\n`) split
// into its events, each checked to be well framed; a generation's result and its stream
// through an API's format, for the formats' tests.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/engine/llm/generation.h"

namespace baton::testing {

struct NamedEvent {
  std::string name;
  nlohmann::json data;
};

inline std::vector<NamedEvent> named_events(const std::string& body) {
  std::vector<NamedEvent> out;
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t end = body.find("\n\n", at);
    if (end == std::string::npos) {
      ADD_FAILURE() << "an event without its blank line: " << body.substr(at);
      break;
    }
    const std::string block = body.substr(at, end - at);
    at = end + 2;
    const std::size_t newline = block.find('\n');
    if (block.rfind("event: ", 0) != 0 || newline == std::string::npos ||
        block.compare(newline + 1, 6, "data: ") != 0) {
      ADD_FAILURE() << "not `event:` then `data:`: " << block;
      continue;
    }
    out.push_back({block.substr(7, newline - 7), nlohmann::json::parse(block.substr(newline + 7))});
  }
  return out;
}

inline std::vector<std::string> names(const std::vector<NamedEvent>& events) {
  std::vector<std::string> out;
  for (const NamedEvent& e : events) out.push_back(e.name);
  return out;
}

// A finished generation of `text` that took `tokens` tokens after a 10-token prompt.
inline GenerationResult result_of(const std::string& text, FinishReason finish,
                                  std::int32_t tokens = 4) {
  GenerationResult result;
  for (std::int32_t t = 1; t <= tokens; ++t) result.tokens.push_back(t);
  result.text = text;
  result.finish = finish;
  result.prompt_tokens = 10;
  return result;
}

// The whole stream of `text` through `format` (stream_open, stream_token, stream_close),
// handed over in pieces of `piece` bytes.
template <class Format>
std::string streamed(Format& format, const std::string& text, std::size_t piece,
                     FinishReason finish = FinishReason::stop) {
  std::string body = format.stream_open();
  for (std::size_t at = 0; at < text.size(); at += piece) {
    TokenDelta delta;
    delta.text = text.substr(at, piece);
    if (at + piece >= text.size()) delta.finish = finish;
    body += format.stream_token(delta);
  }
  return body + format.stream_close(result_of(text, finish));
}

}  // namespace baton::testing
