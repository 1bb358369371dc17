// Test helper: a body of named server-sent events (`event: NAME\ndata: JSON\n\n`) split
// into its events, each checked to be well framed.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

}  // namespace baton::testing
