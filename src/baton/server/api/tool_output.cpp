#include "baton/server/api/tool_output.h"

namespace baton {

ToolOutput::ToolOutput(ToolCallFormat format, std::string id_prefix)
    : format_(format), id_prefix_(std::move(id_prefix)), parser_(format) {}

SplitOutput ToolOutput::whole(std::string_view text) const {
  ParsedToolOutput parsed = parse_tool_calls(format_, text);
  SplitOutput out{.content = std::move(parsed.content), .calls = {}};
  for (ParsedToolCall& call : parsed.calls) {
    out.calls.push_back({.id = id(static_cast<int>(out.calls.size())),
                         .name = std::move(call.name),
                         .arguments = std::move(call.arguments)});
  }
  return out;
}

}  // namespace baton
