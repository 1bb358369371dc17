#include "baton/model/chat/tool_call_scan.h"

#include <nlohmann/json.hpp>

#include "baton/model/chat/json_span.h"

namespace baton {
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr std::size_t kMaxNameBytes = 128;

enum class Match { yes, partial, no };

// Whether `marker` is at text[at], or the text ends inside it.
Match match(std::string_view text, std::size_t at, std::string_view marker) {
  const std::string_view rest = text.substr(std::min(at, text.size()));
  if (rest.starts_with(marker)) return Match::yes;
  if (marker.starts_with(rest)) return Match::partial;
  return Match::no;
}

// One call's scan; `end` is one past it when complete.
struct CallScan {
  BlockState state = BlockState::invalid;
  std::size_t end = 0;
  ScannedCall call{};
};

CallScan partial(ScannedCall call) { return {.state = BlockState::partial, .call = call}; }
CallScan invalid() { return {}; }

bool is_arguments_key(const ToolCallSyntax& syntax, const std::string& key) {
  // Llama 3.x writes "parameters", and sometimes "arguments" as the others do.
  return key == syntax.arguments_key ||
         (syntax.format == ToolCallFormat::llama3_json && key == "arguments");
}

// The arguments object at text[at]: started, and complete with a valid JSON text.
BlockState scan_arguments(std::string_view text, std::size_t at, ScannedCall& call) {
  if (at >= text.size()) return BlockState::partial;
  if (text[at] != '{') return BlockState::invalid;
  call.arguments_begin = at;
  call.arguments_started = true;
  const JsonSpan span = json_value_span(text, at);
  if (span.state == JsonSpanState::partial) {
    call.arguments_end = text.size();
    return BlockState::partial;
  }
  if (span.state == JsonSpanState::invalid ||
      !nlohmann::json::accept(text.substr(at, span.end - at))) {
    return BlockState::invalid;
  }
  call.arguments_end = span.end;
  return BlockState::complete;
}

// {"name": "N", "arguments": {...}} (keys in any order, others skipped) at text[at].
CallScan scan_object_call(const ToolCallSyntax& syntax, std::string_view text, std::size_t at) {
  ScannedCall call;
  if (at >= text.size()) return partial(call);
  if (text[at] != '{') return invalid();
  bool has_arguments = false;
  std::size_t i = at + 1;
  for (;;) {
    i = skip_json_space(text, i);
    if (i >= text.size()) return partial(call);
    if (text[i] != '"') return invalid();
    const JsonSpan key_span = json_value_span(text, i);
    if (key_span.state != JsonSpanState::complete) return partial(call);
    const nlohmann::json key = nlohmann::json::parse(text.substr(i, key_span.end - i), nullptr,
                                                     /*allow_exceptions=*/false);
    if (!key.is_string()) return invalid();
    i = skip_json_space(text, key_span.end);
    if (i >= text.size()) return partial(call);
    if (text[i] != ':') return invalid();
    i = skip_json_space(text, i + 1);
    if (is_arguments_key(syntax, key.get<std::string>())) {
      const BlockState state = scan_arguments(text, i, call);
      if (state != BlockState::complete) return {.state = state, .call = call};
      has_arguments = true;
      i = call.arguments_end;
    } else {
      const JsonSpan value = json_value_span(text, i);
      if (value.state == JsonSpanState::invalid) return invalid();
      if (value.state == JsonSpanState::partial) return partial(call);
      if (key == syntax.name_key) {
        const nlohmann::json name = nlohmann::json::parse(text.substr(i, value.end - i), nullptr,
                                                          /*allow_exceptions=*/false);
        if (!name.is_string() || name.get<std::string>().empty()) return invalid();
        call.name = name.get<std::string>();
      }
      i = value.end;
    }
    i = skip_json_space(text, i);
    if (i >= text.size()) return partial(call);
    if (text[i] == '}') break;
    if (text[i] != ',') return invalid();
    ++i;
  }
  if (call.name.empty() || !has_arguments) return invalid();
  call.complete = true;
  return {.state = BlockState::complete, .end = i + 1, .call = call};
}

bool name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':';
}

// N + name_end + {...} + call_end at text[at] (after call_begin).
CallScan scan_named_call(const ToolCallSyntax& syntax, std::string_view text, std::size_t at) {
  ScannedCall call;
  std::size_t i = skip_json_space(text, at);
  const std::size_t name_begin = i;
  while (i < text.size() && name_character(text[i]) && i - name_begin <= kMaxNameBytes) ++i;
  if (i - name_begin > kMaxNameBytes) return invalid();
  const std::size_t name_end = i;
  i = skip_json_space(text, i);
  const Match separator = match(text, i, syntax.name_end);
  if (separator == Match::partial) return partial(call);
  if (separator == Match::no || name_end == name_begin) return invalid();
  call.name = std::string(text.substr(name_begin, name_end - name_begin));
  i = skip_json_space(text, i + syntax.name_end.size());
  const BlockState state = scan_arguments(text, i, call);
  if (state != BlockState::complete) return {.state = state, .call = call};
  i = call.arguments_end;
  if (!syntax.call_end.empty()) {
    i = skip_json_space(text, i);
    const Match end = match(text, i, syntax.call_end);
    if (end == Match::partial) return partial(call);
    if (end == Match::no) return invalid();
    i += syntax.call_end.size();
  }
  call.complete = true;
  return {.state = BlockState::complete, .end = i, .call = call};
}

// Adds a call scan to the block: false when the block stops there (open or malformed).
bool add_call(BlockScan& block, const CallScan& scan, std::size_t call_start) {
  if (scan.state == BlockState::complete) {
    block.calls.push_back(scan.call);
    return true;
  }
  block.state = scan.state;
  block.invalid_from = call_start;
  if (scan.state == BlockState::partial) block.calls.push_back(scan.call);
  return false;
}

BlockScan finished(BlockScan block, std::size_t end) {
  block.state = BlockState::complete;
  block.end = end;
  return block;
}

BlockScan stopped(BlockScan block, BlockState state, std::size_t at) {
  block.state = state;
  block.invalid_from = at;
  return block;
}

// [{...}, {...}] after the trigger (mistral_v3, granite).
BlockScan scan_list(const ToolCallSyntax& syntax, std::string_view text, std::size_t at) {
  BlockScan block;
  std::size_t i = skip_json_space(text, at);
  if (i >= text.size()) return stopped(block, BlockState::partial, i);
  if (text[i] != '[') return stopped(block, BlockState::invalid, i);
  for (++i;;) {
    i = skip_json_space(text, i);
    const CallScan call = scan_object_call(syntax, text, i);
    if (!add_call(block, call, i)) return block;
    i = skip_json_space(text, call.end);
    if (i >= text.size()) return stopped(block, BlockState::partial, i);
    if (text[i] == ']') return finished(block, i + 1);
    if (text[i] != ',') return stopped(block, BlockState::invalid, i);
    ++i;
  }
}

// <｜tool▁call▁begin｜>...<｜tool▁call▁end｜> ... <｜tool▁calls▁end｜> after the trigger.
BlockScan scan_deepseek(const ToolCallSyntax& syntax, std::string_view text, std::size_t at) {
  BlockScan block;
  for (std::size_t i = at;;) {
    i = skip_json_space(text, i);
    if (i >= text.size()) return stopped(block, BlockState::partial, i);
    if (!block.calls.empty() && match(text, i, syntax.block_end) == Match::yes) {
      return finished(block, i + syntax.block_end.size());
    }
    const Match begin = match(text, i, syntax.call_begin);
    if (begin == Match::partial ||
        (!block.calls.empty() && match(text, i, syntax.block_end) == Match::partial)) {
      return stopped(block, BlockState::partial, i);
    }
    if (begin == Match::no) return stopped(block, BlockState::invalid, i);
    const CallScan call = scan_named_call(syntax, text, i + syntax.call_begin.size());
    if (!add_call(block, call, i)) return block;
    i = call.end;
  }
}

// Llama 3.x: one JSON call, or several parted by ';'.
BlockScan scan_llama3(const ToolCallSyntax& syntax, std::string_view text, std::size_t at) {
  BlockScan block;
  std::size_t i = at;
  if (match(text, i, "<|python_tag|>") == Match::yes)
    i += std::string_view("<|python_tag|>").size();
  for (;;) {
    i = skip_json_space(text, i);
    const CallScan call = scan_object_call(syntax, text, i);
    if (!add_call(block, call, i)) return block;
    const std::size_t after = skip_json_space(text, call.end);
    // At the end of the text so far, a ';' and another call may still come.
    if (after >= text.size()) return stopped(block, BlockState::partial, after);
    if (text[after] != ';') return finished(block, call.end);
    i = after + 1;
  }
}

BlockScan scan_single(const ToolCallSyntax& syntax, std::string_view text, std::size_t begin) {
  BlockScan block;
  const std::size_t at = begin + syntax.trigger.size();
  if (syntax.format == ToolCallFormat::hermes || syntax.format == ToolCallFormat::generic) {
    const std::size_t object = skip_json_space(text, at);
    const CallScan call = scan_object_call(syntax, text, object);
    if (!add_call(block, call, begin)) return block;
    const std::size_t end = skip_json_space(text, call.end);
    const Match close = match(text, end, "</tool_call>");
    if (close == Match::no) {
      block.calls.pop_back();  // whole, but not closed: not a call
      return stopped(block, BlockState::invalid, begin);
    }
    // The text ends before the closing tag (or inside it): should the answer end here (the
    // model stopped right after the JSON), the call is whole and the rest is content.
    if (close == Match::partial) return stopped(block, BlockState::partial, end);
    return finished(block, end + std::string_view("</tool_call>").size());
  }
  const CallScan call = scan_named_call(syntax, text, at);
  if (!add_call(block, call, begin)) return block;
  return finished(block, call.end);
}

BlockScan scan_block_from(const ToolCallSyntax& syntax, std::string_view text, std::size_t begin) {
  switch (syntax.format) {
    case ToolCallFormat::mistral_v3:
    case ToolCallFormat::granite:
      return scan_list(syntax, text, begin + syntax.trigger.size());
    case ToolCallFormat::deepseek:
      return scan_deepseek(syntax, text, begin + syntax.trigger.size());
    case ToolCallFormat::llama3_json:
      return scan_llama3(syntax, text, begin);
    default:
      return scan_single(syntax, text, begin);
  }
}

}  // namespace

std::size_t find_block(const ToolCallSyntax& syntax, std::string_view text, std::size_t from,
                       std::size_t output_start) {
  std::size_t found = text.find(syntax.trigger, from);
  if (syntax.format == ToolCallFormat::llama3_json) {
    found = text.find("<|python_tag|>", from);
    const std::size_t first = skip_json_space(text, output_start);
    if (first >= from && first < text.size() && text[first] == '{') found = first;
  }
  return found;
}

std::size_t possible_block_start(const ToolCallSyntax& syntax, std::string_view text,
                                 std::size_t from, std::size_t output_start) {
  const std::string_view rest = text.substr(from);
  if (syntax.format == ToolCallFormat::llama3_json &&
      skip_json_space(text, output_start) == text.size()) {
    return rest.size();  // only whitespace yet: the answer may still open with a call
  }
  const std::string_view trigger = syntax.format == ToolCallFormat::llama3_json
                                       ? std::string_view("<|python_tag|>")
                                       : std::string_view(syntax.trigger);
  for (std::size_t n = std::min(rest.size(), trigger.size() - 1); n > 0; --n) {
    if (trigger.starts_with(rest.substr(rest.size() - n))) return n;
  }
  return 0;
}

BlockScan scan_block(const ToolCallSyntax& syntax, std::string_view text, std::size_t begin) {
  BlockScan block = scan_block_from(syntax, text, begin);
  bool any_complete = false;
  for (const ScannedCall& call : block.calls) any_complete = any_complete || call.complete;
  // Nothing of a block that holds no whole call is a call: its text from the trigger on.
  if (block.state != BlockState::complete && !any_complete) block.invalid_from = begin;
  return block;
}

}  // namespace baton
