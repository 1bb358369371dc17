#include "baton/model/chat/json_span.h"

#include <string>

namespace baton {
namespace {

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// One past the closing quote of the string opening at text[begin], or npos when the text
// ends first.
std::size_t string_end(std::string_view text, std::size_t begin) {
  for (std::size_t i = begin + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

bool scalar_character(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' ||
         c == 'E';
}

JsonSpan scalar_span(std::string_view text, std::size_t begin) {
  std::size_t i = begin;
  while (i < text.size() && scalar_character(text[i])) ++i;
  if (i == begin) return {.state = JsonSpanState::invalid};
  if (i == text.size()) return {.state = JsonSpanState::partial};
  return {.state = JsonSpanState::complete, .end = i};
}

}  // namespace

JsonSpan json_value_span(std::string_view text, std::size_t begin) {
  if (begin >= text.size()) return {.state = JsonSpanState::partial};
  const char first = text[begin];
  if (first == '"') {
    const std::size_t end = string_end(text, begin);
    if (end == std::string_view::npos) return {.state = JsonSpanState::partial};
    return {.state = JsonSpanState::complete, .end = end};
  }
  if (first != '{' && first != '[') return scalar_span(text, begin);
  std::string open;  // the brackets not closed yet
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = string_end(text, i);
      if (i == std::string_view::npos) return {.state = JsonSpanState::partial};
      --i;
    } else if (c == '{' || c == '[') {
      if (open.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
        return {.state = JsonSpanState::invalid};
      }
      open += c;
    } else if (c == '}' || c == ']') {
      if (open.back() != (c == '}' ? '{' : '[')) return {.state = JsonSpanState::invalid};
      open.pop_back();
      if (open.empty()) return {.state = JsonSpanState::complete, .end = i + 1};
    }
  }
  return {.state = JsonSpanState::partial};
}

JsonSpan JsonContainerScanner::feed(std::string_view piece) {
  for (std::size_t i = 0; i < piece.size() && state_ == JsonSpanState::partial; ++i) {
    const char c = piece[i];
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) state_ = JsonSpanState::invalid;
      open_ += c;
    } else if (c == '}' || c == ']') {
      if (open_.empty() || open_.back() != (c == '}' ? '{' : '[')) {
        state_ = JsonSpanState::invalid;
      } else {
        open_.pop_back();
        if (open_.empty()) {
          state_ = JsonSpanState::complete;
          end_ = fed_ + i + 1;
        }
      }
    } else if (open_.empty()) {
      state_ = JsonSpanState::invalid;  // no container opens the value
    }
  }
  fed_ += piece.size();
  return {.state = state_, .end = end_};
}

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = string_end(text, i);
      if (i == std::string_view::npos) break;
      --i;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

std::size_t skip_json_space(std::string_view text, std::size_t at) {
  while (at < text.size() && json_space(text[at])) ++at;
  return at;
}

}  // namespace baton
