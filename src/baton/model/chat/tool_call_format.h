// How a model family writes tool calls in its output, found from its chat template's text
// (as llama.cpp's chat handlers find it), and the syntax of a call in each, for the parser
// (tool_call_parser.h) and for a grammar that makes the model write calls validly:
//
//   hermes       <tool_call>\n{"name": N, "arguments": {...}}\n</tool_call>   (Hermes 2/3,
//                Qwen 2.5, Qwen 3; the chatml family)
//   llama3_json  {"name": N, "parameters": {...}} as the whole answer, or after
//                <|python_tag|> (Llama 3.1-3.3; the llama3 family); "arguments" is also read
//   mistral_v3   [TOOL_CALLS] [{"name": N, "arguments": {...}}, ...]  (Mistral v3 / v7,
//                Nemo, Small 3.1; the mistral family)
//   mistral_v11  [TOOL_CALLS]N[ARGS]{...}, repeated per call (Magistral, Devstral, Mistral
//                Small 3.2: templates that write [ARGS])
//   functionary  <function=N>{...}</function>  (functionary v3.1)
//   deepseek     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>N<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
//                ...<｜tool▁calls▁end｜>  (DeepSeek V3.1)
//   granite      <|tool_call|>[{"name": N, "arguments": {...}}, ...]  (Granite 3.x)
//   generic      a template that shows no format: Hermes' syntax, the most widely trained
//                one; the server describes it to the model (`description`) and a grammar
//                holds the model to it.
//
// Thread-safety: pure functions and values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/model/chat/chat_family.h"

namespace baton {

enum class ToolCallFormat {
  hermes,
  llama3_json,
  mistral_v3,
  mistral_v11,
  functionary,
  deepseek,
  granite,
  generic
};

std::string_view to_string(ToolCallFormat format);

// The format whose markers the template's text writes; generic when none.
ToolCallFormat detect_tool_call_format(std::string_view jinja_text);

// The format of a built-in family: chatml hermes, llama3 llama3_json, mistral mistral_v3.
ToolCallFormat tool_call_format_of(ChatFamily family);

// How one call's name and arguments are written.
enum class ToolCallBody {
  json_object,         // {"<name_key>": "N", "<arguments_key>": {...}}
  name_then_arguments  // N, then name_end, then the arguments object
};

// The canonical way to write calls: block_begin, then per call call_begin + body +
// call_end, calls parted by separator, then block_end. A grammar writes this; the parser
// also takes whitespace around the JSON. Every call of the block starts with `trigger`
// (where a lazy grammar starts: under tool_choice auto it applies from the trigger's first
// character on; under required or a named function, from the start of the answer).
struct ToolCallSyntax {
  ToolCallFormat format = ToolCallFormat::generic;
  std::string trigger{};
  std::vector<std::string> other_triggers{};  // also open a call (llama3's <|python_tag|>)
  std::string block_begin{};
  std::string call_begin{};
  ToolCallBody body = ToolCallBody::json_object;
  std::string name_key = "name";
  std::string arguments_key = "arguments";
  std::string name_end{};  // name_then_arguments
  std::string call_end{};
  std::string separator{};
  std::string block_end{};
  bool list = false;          // the block holds a JSON list of call objects (mistral_v3, granite)
  std::string description{};  // one line, for people and for an instruction to the model
};

const ToolCallSyntax& tool_call_syntax(ToolCallFormat format);

// Every marker the syntax writes (triggers, begins, ends), for the vocabulary to keep.
std::vector<std::string> tool_call_markers(const ToolCallSyntax& syntax);

}  // namespace baton
