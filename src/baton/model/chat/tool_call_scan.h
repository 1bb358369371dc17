// The tool-call blocks of a model's output, scanned in a text that may still be growing:
// where a block opens (a format's trigger), the calls it holds so far (name, where the
// arguments' JSON text lies) and whether it is complete, still open, or malformed. The
// whole-text parser and the streaming parser (tool_call_parser.h) both read the output
// through these, so that they agree on every call.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/chat/tool_call_format.h"

namespace baton {

struct ScannedCall {
  std::string name;  // empty until the whole name has been read
  std::size_t arguments_begin = 0;
  std::size_t arguments_end = 0;  // while the arguments are open: the end of the text
  bool arguments_started = false;
  bool complete = false;
};

enum class BlockState { complete, partial, invalid };

struct BlockScan {
  BlockState state = BlockState::invalid;
  std::size_t end = 0;  // complete: one past the block
  // Complete calls, then (partial) at most one open call. invalid: the complete calls
  // before the malformed one, which starts at invalid_from.
  std::vector<ScannedCall> calls{};
  std::size_t invalid_from = 0;
};

// Where the first block opens at or after `from`, or npos. `output_start` is where the
// answer begins (llama3_json's bare JSON opens a block only there, after whitespace).
std::size_t find_block(const ToolCallSyntax& syntax, std::string_view text, std::size_t from,
                       std::size_t output_start);

// How many characters at the end of text[from..] might begin a block still to come: text
// to hold back rather than stream out as content.
std::size_t possible_block_start(const ToolCallSyntax& syntax, std::string_view text,
                                 std::size_t from, std::size_t output_start);

// The block opening at `begin` (a find_block result), in the text as it is so far.
BlockScan scan_block(const ToolCallSyntax& syntax, std::string_view text, std::size_t begin);

}  // namespace baton
