#include "baton/model/chat/tool_call_format.h"

namespace baton {
namespace {

bool has(std::string_view text, std::string_view marker) {
  return text.find(marker) != std::string_view::npos;
}

ToolCallSyntax hermes_syntax(ToolCallFormat format) {
  return {.format = format,
          .trigger = "<tool_call>",
          .call_begin = "<tool_call>\n",
          .call_end = "\n</tool_call>",
          .separator = "\n",
          .description =
              "each call as <tool_call>\n{\"name\": <function-name>, \"arguments\": "
              "<args-json-object>}\n</tool_call>"};
}

ToolCallSyntax make_syntax(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::hermes:
    case ToolCallFormat::generic:
      return hermes_syntax(format);
    case ToolCallFormat::llama3_json:
      return {.format = format,
              .trigger = "{\"name\"",
              .other_triggers = {"<|python_tag|>"},
              .arguments_key = "parameters",
              .description =
                  "the whole answer a JSON object {\"name\": <function-name>, "
                  "\"parameters\": <args-json-object>} (one call)"};
    case ToolCallFormat::mistral_v3:
      return {.format = format,
              .trigger = "[TOOL_CALLS]",
              .block_begin = "[TOOL_CALLS] [",
              .separator = ", ",
              .block_end = "]",
              .list = true,
              .description =
                  "[TOOL_CALLS] then a JSON list of {\"name\": <function-name>, "
                  "\"arguments\": <args-json-object>}"};
    case ToolCallFormat::mistral_v11:
      return {.format = format,
              .trigger = "[TOOL_CALLS]",
              .call_begin = "[TOOL_CALLS]",
              .body = ToolCallBody::name_then_arguments,
              .name_end = "[ARGS]",
              .description = "each call as [TOOL_CALLS]<function-name>[ARGS]<args-json-object>"};
    case ToolCallFormat::functionary:
      return {.format = format,
              .trigger = "<function=",
              .call_begin = "<function=",
              .body = ToolCallBody::name_then_arguments,
              .name_end = ">",
              .call_end = "</function>",
              .description =
                  "each call as <function=<function-name>><args-json-object>"
                  "</function>"};
    case ToolCallFormat::deepseek:
      return {.format = format,
              .trigger = "<｜tool▁calls▁begin｜>",
              .block_begin = "<｜tool▁calls▁begin｜>",
              .call_begin = "<｜tool▁call▁begin｜>",
              .body = ToolCallBody::name_then_arguments,
              .name_end = "<｜tool▁sep｜>",
              .call_end = "<｜tool▁call▁end｜>",
              .block_end = "<｜tool▁calls▁end｜>",
              .description =
                  "<｜tool▁calls▁begin｜>, each call as <｜tool▁call▁begin｜>"
                  "<function-name><｜tool▁sep｜><args-json-object><｜tool▁call▁end｜>, "
                  "then <｜tool▁calls▁end｜>"};
    case ToolCallFormat::granite:
      return {.format = format,
              .trigger = "<|tool_call|>",
              .block_begin = "<|tool_call|>[",
              .separator = ", ",
              .block_end = "]",
              .list = true,
              .description =
                  "<|tool_call|> then a JSON list of {\"name\": <function-name>, "
                  "\"arguments\": <args-json-object>}"};
  }
  return hermes_syntax(ToolCallFormat::generic);
}

}  // namespace

std::string_view to_string(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::hermes:
      return "hermes";
    case ToolCallFormat::llama3_json:
      return "llama3_json";
    case ToolCallFormat::mistral_v3:
      return "mistral_v3";
    case ToolCallFormat::mistral_v11:
      return "mistral_v11";
    case ToolCallFormat::functionary:
      return "functionary";
    case ToolCallFormat::deepseek:
      return "deepseek";
    case ToolCallFormat::granite:
      return "granite";
    case ToolCallFormat::generic:
      return "generic";
  }
  return "generic";
}

// Most specific markers first: functionary also writes Llama's headers and <|python_tag|>.
ToolCallFormat detect_tool_call_format(std::string_view text) {
  if (has(text, "<function=")) return ToolCallFormat::functionary;
  if (has(text, "<｜tool▁call▁begin｜>")) return ToolCallFormat::deepseek;
  if (has(text, "[TOOL_CALLS]")) {
    return has(text, "[ARGS]") ? ToolCallFormat::mistral_v11 : ToolCallFormat::mistral_v3;
  }
  if (has(text, "<|tool_call|>")) return ToolCallFormat::granite;
  if (has(text, "<tool_call>")) return ToolCallFormat::hermes;
  if (has(text, "<|start_header_id|>") &&
      (has(text, "\"parameters\"") || has(text, "<|python_tag|>"))) {
    return ToolCallFormat::llama3_json;
  }
  return ToolCallFormat::generic;
}

ToolCallFormat tool_call_format_of(ChatFamily family) {
  switch (family) {
    case ChatFamily::chatml:
      return ToolCallFormat::hermes;
    case ChatFamily::llama3:
      return ToolCallFormat::llama3_json;
    case ChatFamily::mistral:
      return ToolCallFormat::mistral_v3;
  }
  return ToolCallFormat::generic;
}

const ToolCallSyntax& tool_call_syntax(ToolCallFormat format) {
  static const ToolCallSyntax kSyntaxes[] = {
      make_syntax(ToolCallFormat::hermes),      make_syntax(ToolCallFormat::llama3_json),
      make_syntax(ToolCallFormat::mistral_v3),  make_syntax(ToolCallFormat::mistral_v11),
      make_syntax(ToolCallFormat::functionary), make_syntax(ToolCallFormat::deepseek),
      make_syntax(ToolCallFormat::granite),     make_syntax(ToolCallFormat::generic)};
  return kSyntaxes[static_cast<int>(format)];
}

std::vector<std::string> tool_call_markers(const ToolCallSyntax& syntax) {
  std::vector<std::string> markers = syntax.other_triggers;
  for (const std::string* m : {&syntax.trigger, &syntax.block_begin, &syntax.call_begin,
                               &syntax.name_end, &syntax.call_end, &syntax.block_end}) {
    if (!m->empty()) markers.push_back(*m);
  }
  return markers;
}

}  // namespace baton
