// Tool calls out of a model's output, in the format its template taught it
// (tool_call_format.h): the whole text at once (a non-streamed answer), or decoded text as
// it comes (a streamed one), both reading the text the same way (tool_call_scan.h):
//
// - Text before, between and after calls is content; whitespace alone between calls or
//   after the last one is not.
// - Several calls are several calls, in order; a call's arguments are the JSON text of its
//   arguments object as the model wrote it (a streamed call's fragments concatenate to it).
// - A malformed call (no name, arguments that are not a JSON object, bad JSON, a marker not
//   closed) stays content, from its trigger on; never an exception. (A Hermes call whose
//   JSON is whole when the answer ends, before its </tool_call>, is a call: models stop so.) A
//   streamed call is sent once its name is read and its arguments have begun; should the rest then
//   turn out malformed or be cut off by the end, it stays the call sent so far, the text that broke
//   it is dropped, and what follows is content again (a grammar keeps a model from writing such
//   calls).
// - Only text that may be the start of a trigger (and, for llama3_json, the whitespace
//   that opens the answer) is held back while streaming.
//
// Work: linear in the text, plus, per feed while a call is open outside its arguments (its
// name and markers: short), the length of the open block; a call's arguments are followed
// piece by piece, and the block is scanned again once they close.
// Thread-safety: parse_tool_calls is a pure function; a ToolCallStreamParser is used by one
// thread at a time.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/chat/json_span.h"
#include "baton/model/chat/tool_call_format.h"
#include "baton/model/chat/tool_call_scan.h"

namespace baton {

struct ParsedToolCall {
  std::string name{};
  std::string arguments{};  // JSON text of an object
};

struct ParsedToolOutput {
  std::string content{};
  std::vector<ParsedToolCall> calls{};
};

ParsedToolOutput parse_tool_calls(ToolCallFormat format, std::string_view text);

// One piece of a streamed answer: content text, or a piece of call number call_index (its
// first piece carries the name; the arguments fragments follow, in order).
struct ToolStreamPiece {
  std::string content{};
  int call_index = -1;  // >= 0: a call's piece
  std::string name{};
  std::string arguments{};
};

class ToolCallStreamParser {
 public:
  explicit ToolCallStreamParser(ToolCallFormat format);

  // The pieces that the text decoded so far settles, `delta` added.
  std::vector<ToolStreamPiece> feed(std::string_view delta);
  // The rest, at the end of the answer.
  std::vector<ToolStreamPiece> finish();

  int calls() const { return calls_; }  // calls begun so far

 private:
  friend ParsedToolOutput parse_tool_calls(ToolCallFormat format, std::string_view text);

  void process(bool at_end, std::vector<ToolStreamPiece>& out);
  bool process_block(bool at_end, std::vector<ToolStreamPiece>& out);
  void emit_calls(const BlockScan& scan, bool complete_only, std::vector<ToolStreamPiece>& out);
  void emit_content(std::size_t end, bool settled, std::vector<ToolStreamPiece>& out);
  bool follow_open_arguments(std::vector<ToolStreamPiece>& out);
  void start_following(const BlockScan& scan);

  // The arguments of the open call, sent and still growing: followed piece by piece.
  struct OpenArguments {
    JsonContainerScanner scanner{};
    std::size_t scanned_to = 0;  // text_ before this has been fed to the scanner
    std::size_t begin = 0;       // where the arguments start in text_
    std::size_t slot = 0;        // the call's place in block_sent_
  };

  const ToolCallSyntax& syntax_;
  bool stream_open_calls_ = true;  // false for a whole text: calls only once complete
  std::string text_;
  std::size_t settled_ = 0;      // text before this is sent (or dropped)
  std::size_t search_from_ = 0;  // no block opens before this (a malformed one did)
  bool in_block_ = false;
  std::size_t block_begin_ = 0;
  std::vector<std::size_t> block_sent_;  // per call of the open block: arguments bytes sent
  bool after_call_ = false;              // whitespace now is not content (yet)
  std::optional<OpenArguments> open_arguments_;
  int calls_ = 0;
};

}  // namespace baton
