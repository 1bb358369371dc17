#include "baton/model/chat/tool_call_parser.h"

#include <algorithm>

#include "baton/model/chat/json_span.h"

namespace baton {
namespace {

bool only_space(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

void add_content(std::vector<ToolStreamPiece>& out, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty() && out.back().call_index < 0) {
    out.back().content += text;
  } else {
    out.push_back({.content = std::string(text)});
  }
}

}  // namespace

ToolCallStreamParser::ToolCallStreamParser(ToolCallFormat format)
    : syntax_(tool_call_syntax(format)) {}

std::vector<ToolStreamPiece> ToolCallStreamParser::feed(std::string_view delta) {
  text_ += delta;
  std::vector<ToolStreamPiece> out;
  process(false, out);
  return out;
}

std::vector<ToolStreamPiece> ToolCallStreamParser::finish() {
  std::vector<ToolStreamPiece> out;
  process(true, out);
  return out;
}

// Content up to `end`. After a call, whitespace alone is held until text follows it
// (content) or a block or the end does (dropped): `settled` says nothing more comes
// before `end`'s successor is known.
void ToolCallStreamParser::emit_content(std::size_t end, bool settled,
                                        std::vector<ToolStreamPiece>& out) {
  const std::string_view piece = std::string_view(text_).substr(settled_, end - settled_);
  if (after_call_ && only_space(piece)) {
    if (settled) settled_ = end;
    return;
  }
  after_call_ = false;
  add_content(out, piece);
  settled_ = end;
}

// Sends what the scan adds: each call once it has a name and its arguments have begun
// (or, for a whole text, once complete), then its arguments as they grow.
void ToolCallStreamParser::emit_calls(const BlockScan& scan, bool complete_only,
                                      std::vector<ToolStreamPiece>& out) {
  for (std::size_t k = 0; k < scan.calls.size(); ++k) {
    const ScannedCall& call = scan.calls[k];
    const bool ready = complete_only ? call.complete : !call.name.empty() && call.arguments_started;
    if (k >= block_sent_.size()) {
      if (!ready) return;
      out.push_back({.call_index = calls_++, .name = call.name});
      block_sent_.push_back(0);
    }
    const std::size_t begin = call.arguments_begin + block_sent_[k];
    if (call.arguments_end > begin) {
      const int index = calls_ - static_cast<int>(block_sent_.size()) + static_cast<int>(k);
      out.push_back(
          {.call_index = index, .arguments = text_.substr(begin, call.arguments_end - begin)});
      block_sent_[k] = call.arguments_end - call.arguments_begin;
    }
  }
}

// While the open call's arguments stay open, the new text is more of them: sent without
// scanning the block again. False once they close (or break): the block is scanned.
bool ToolCallStreamParser::follow_open_arguments(std::vector<ToolStreamPiece>& out) {
  OpenArguments& open = *open_arguments_;
  const JsonSpan span = open.scanner.feed(std::string_view(text_).substr(open.scanned_to));
  open.scanned_to = text_.size();
  if (span.state != JsonSpanState::partial) {
    open_arguments_.reset();
    return false;
  }
  const std::size_t from = open.begin + block_sent_[open.slot];
  if (text_.size() > from) {
    const int index = calls_ - static_cast<int>(block_sent_.size()) + static_cast<int>(open.slot);
    out.push_back({.call_index = index, .arguments = text_.substr(from)});
    block_sent_[open.slot] = text_.size() - open.begin;
  }
  return true;
}

// After a scan that ended inside the arguments of a call already sent.
void ToolCallStreamParser::start_following(const BlockScan& scan) {
  if (scan.calls.empty() || block_sent_.size() != scan.calls.size()) return;
  const ScannedCall& call = scan.calls.back();
  if (!call.arguments_started || call.complete || call.arguments_end != text_.size()) return;
  OpenArguments open{.begin = call.arguments_begin, .slot = scan.calls.size() - 1};
  open.scanner.feed(std::string_view(text_).substr(call.arguments_begin));
  open.scanned_to = text_.size();
  open_arguments_ = std::move(open);
}

// The open block, scanned again with the new text: true when it is over (complete,
// malformed, or cut by the end), so that content scanning goes on.
bool ToolCallStreamParser::process_block(bool at_end, std::vector<ToolStreamPiece>& out) {
  if (open_arguments_ && !at_end && follow_open_arguments(out)) return false;
  open_arguments_.reset();
  const BlockScan scan = scan_block(syntax_, text_, block_begin_);
  if (scan.state == BlockState::complete) {
    emit_calls(scan, false, out);
    settled_ = scan.end;
    after_call_ = true;
  } else if (scan.state == BlockState::partial && !at_end) {
    if (stream_open_calls_) {
      emit_calls(scan, false, out);
      start_following(scan);
    }
    return false;
  } else {
    // Malformed, or open at the end: the whole calls before the failing one stay calls
    // (and one already streamed stays sent); the text from the failing one is content.
    emit_calls(scan, true, out);
    const auto whole = static_cast<std::size_t>(std::count_if(
        scan.calls.begin(), scan.calls.end(), [](const ScannedCall& c) { return c.complete; }));
    // The failing call already sent stays a call: the text so far is its own.
    const std::size_t resume = block_sent_.size() > whole ? text_.size() : scan.invalid_from;
    settled_ = std::max(settled_, resume);
    search_from_ = resume == scan.invalid_from ? resume + 1 : resume;
    after_call_ = !block_sent_.empty();
  }
  in_block_ = false;
  block_sent_.clear();
  return true;
}

void ToolCallStreamParser::process(bool at_end, std::vector<ToolStreamPiece>& out) {
  for (;;) {
    if (in_block_) {
      if (!process_block(at_end, out)) return;
      continue;
    }
    const std::size_t begin = find_block(syntax_, text_, std::max(settled_, search_from_), 0);
    if (begin != std::string_view::npos) {
      emit_content(begin, true, out);
      settled_ = begin;
      in_block_ = true;
      block_begin_ = begin;
      continue;
    }
    if (at_end) {
      emit_content(text_.size(), true, out);
      return;
    }
    const std::size_t held = possible_block_start(syntax_, text_, settled_, 0);
    emit_content(text_.size() - held, false, out);
    return;
  }
}

ParsedToolOutput parse_tool_calls(ToolCallFormat format, std::string_view text) {
  ToolCallStreamParser parser(format);
  parser.stream_open_calls_ = false;
  parser.text_ = std::string(text);
  std::vector<ToolStreamPiece> pieces;
  parser.process(true, pieces);
  ParsedToolOutput result;
  for (ToolStreamPiece& piece : pieces) {
    if (piece.call_index < 0) {
      result.content += piece.content;
    } else if (static_cast<std::size_t>(piece.call_index) == result.calls.size()) {
      result.calls.push_back({.name = std::move(piece.name), .arguments = piece.arguments});
    } else {
      result.calls[piece.call_index].arguments += piece.arguments;
    }
  }
  return result;
}

}  // namespace baton
