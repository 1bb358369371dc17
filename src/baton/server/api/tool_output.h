// ToolOutput: the tool calls in one completion's text, as every API's format answers them:
// the whole text split into content and calls (an unstreamed answer), or the text read as
// it streams (ToolCallStreamParser), each call with the id the response gives it
// (`id_prefix` and the call's index: unique within the server's life).
// Thread-safety: one response, one thread at a time (the session's strand).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/model/chat/tool_call_parser.h"

namespace baton {

struct OutputToolCall {
  std::string id{};
  std::string name{};
  std::string arguments{};  // JSON text of an object
};

struct SplitOutput {
  std::string content{};
  std::vector<OutputToolCall> calls{};
};

class ToolOutput {
 public:
  ToolOutput(ToolCallFormat format, std::string id_prefix);

  SplitOutput whole(std::string_view text) const;
  // Streamed: the pieces the text so far settles, `delta` added; the rest at the end.
  std::vector<ToolStreamPiece> feed(std::string_view delta) { return parser_.feed(delta); }
  std::vector<ToolStreamPiece> finish() { return parser_.finish(); }
  // The id of call number `index`.
  std::string id(int index) const { return id_prefix_ + std::to_string(index); }
  int calls() const { return parser_.calls(); }

 private:
  ToolCallFormat format_;
  std::string id_prefix_;
  ToolCallStreamParser parser_;
};

}  // namespace baton
