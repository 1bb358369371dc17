#include "baton/model/chat/builtin_chat_render.h"

#include <cstdint>
#include <optional>
#include <stdexcept>

#include "baton/model/chat/chat_message_json.h"
#include "baton/model/template/jinja_builtins.h"
#include "baton/model/template/jinja_value.h"

namespace baton {
namespace {

using nlohmann::ordered_json;

// Jinja's trim filter: Python's str.strip(), as the Jinja engine has it.
std::string trim(const std::string& text) { return jinja::python_strip(text, true, true); }

// The template's `value | tojson`: Python's json.dumps.
std::string tojson(const ordered_json& value, std::optional<int> indent = std::nullopt) {
  return jinja::Value::from_json(value).to_json(indent);
}

// A call's arguments as the templates print them: the dict's tojson, or the client's text
// when it is no JSON object (Qwen's templates print a string argument as it is).
std::string arguments_text(const ToolCall& call) {
  std::optional<ordered_json> object = arguments_object(call.arguments);
  return object ? tojson(*object) : call.arguments;
}

void check_roles(std::span<const ChatMessage> messages) {
  if (messages.empty()) throw std::invalid_argument("a conversation needs at least one message");
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant" && m.role != "tool") {
      throw std::invalid_argument("unknown chat role '" + m.role +
                                  "': the roles are system, user, assistant and tool");
    }
  }
}

// --- chatml: Qwen2.5 / Qwen3 ---

std::string chatml_tools_system(std::span<const ChatMessage> messages, const ChatTools& tools) {
  std::string out = "<|im_start|>system\n";
  if (messages.front().role == "system") out += messages.front().content + "\n\n";
  out +=
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const ordered_json& tool : tools) out += "\n" + tojson(tool);
  out +=
      "\n</tools>\n\nFor each function call, return a json object with function name and "
      "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
      "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";
  return out;
}

std::string chatml_assistant(const ChatMessage& m) {
  std::string out = "<|im_start|>assistant\n" + m.content;
  for (std::size_t i = 0; i < m.tool_calls.size(); ++i) {
    if (i > 0 || !m.content.empty()) out += "\n";
    out += "<tool_call>\n{\"name\": \"" + m.tool_calls[i].name +
           "\", \"arguments\": " + arguments_text(m.tool_calls[i]) + "}\n</tool_call>";
  }
  return out + "<|im_end|>\n";
}

std::string render_chatml(std::span<const ChatMessage> messages, const ChatTools& tools) {
  std::string out;
  if (!tools.empty()) {
    out = chatml_tools_system(messages, tools);
  } else if (messages.front().role == "system") {
    out = "<|im_start|>system\n" + messages.front().content + "<|im_end|>\n";
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "assistant") {
      out += chatml_assistant(m);
    } else if (m.role == "tool") {
      // A run of tool results shares one user turn.
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
    } else if (m.role == "user" || i > 0) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    }
  }
  return out + "<|im_start|>assistant\n";
}

// --- llama3: Llama 3.1 / 3.2 ---

constexpr const char* kLlamaToolInstruction =
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\nRespond in the format "
    "{\"name\": function name, \"parameters\": dictionary of argument name and its value}."
    "Do not use variables.\n\n";

std::string llama3_header(const std::string& role) {
  return "<|start_header_id|>" + role + "<|end_header_id|>\n\n";
}

std::string llama3_message(const ChatMessage& m) {
  if (m.role == "tool") {
    return llama3_header("ipython") + tojson(ordered_json(m.content)) + "<|eot_id|>";
  }
  if (m.tool_calls.empty()) return llama3_header(m.role) + trim(m.content) + "<|eot_id|>";
  if (m.tool_calls.size() != 1) {
    throw std::invalid_argument(
        "llama3 chat template: one tool call per assistant message (this model only supports "
        "single tool-calls at once)");
  }
  const ToolCall& call = m.tool_calls.front();
  std::optional<ordered_json> object = arguments_object(call.arguments);
  return llama3_header("assistant") + "{\"name\": \"" + call.name +
         "\", \"parameters\": " + tojson(object ? *object : ordered_json(call.arguments)) +
         "}<|eot_id|>";
}

std::string render_llama3(const std::string& bos, std::span<const ChatMessage> messages,
                          const ChatTools& tools) {
  std::string out = bos;
  if (!tools.empty()) {
    std::string system;
    if (messages.front().role == "system") {
      system = trim(messages.front().content);
      messages = messages.subspan(1);
    }
    out += llama3_header("system") +
           "Environment: ipython\nCutting Knowledge Date: December 2023\n"
           "Today Date: 26 Jul 2024\n\n" +
           system + "<|eot_id|>";
    if (messages.empty()) {
      throw std::invalid_argument(
          "llama3 chat template: the tools go in the first user message, and there is none");
    }
    out += llama3_header("user") + kLlamaToolInstruction;
    for (const ordered_json& tool : tools) out += tojson(tool, 4) + "\n\n";
    out += trim(messages.front().content) + "<|eot_id|>";
    messages = messages.subspan(1);
  }
  for (const ChatMessage& m : messages) out += llama3_message(m);
  return out + llama3_header("assistant");
}

// --- mistral: v3 ---

bool mistral_counted_turn(const ChatMessage& m) { return m.role != "tool" && m.tool_calls.empty(); }

// After the optional leading system message, user and assistant alternate; tool calls and
// results are left out of the count, as in the v3 template.
void check_mistral_turns(std::span<const ChatMessage> turns) {
  std::size_t index = 0;
  for (const ChatMessage& m : turns) {
    if (m.role == "system") {
      throw std::invalid_argument(
          "mistral chat template: only the first message may be a system message");
    }
    if (!mistral_counted_turn(m)) continue;
    if ((m.role == "user") != (index % 2 == 0)) {
      throw std::invalid_argument(
          "mistral chat template: after the optional system message, conversation roles must "
          "alternate user/assistant/user/assistant/...");
    }
    ++index;
  }
}

// The template writes a string value between quotes as it is (no escaping): so does this.
std::string mistral_tools(const ChatTools& tools) {
  std::string out = "[AVAILABLE_TOOLS] [";
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (i > 0) out += ", ";
    out += "{\"type\": \"function\", \"function\": {";
    bool first = true;
    for (const auto& [key, value] : tools[i]["function"].items()) {
      if (key == "return") continue;
      if (!first) out += ", ";
      first = false;
      out += "\"" + key + "\": ";
      out += value.is_string() ? "\"" + value.get<std::string>() + "\"" : tojson(value);
    }
    out += "}}";
  }
  return out + "][/AVAILABLE_TOOLS]";
}

std::string mistral_calls(const ChatMessage& m, const std::string& eos) {
  std::string out = "[TOOL_CALLS] [";
  for (std::size_t i = 0; i < m.tool_calls.size(); ++i) {
    const ToolCall& call = m.tool_calls[i];
    std::optional<ordered_json> object = arguments_object(call.arguments);
    const ordered_json function = {{"name", call.name},
                                   {"arguments", object ? *object : ordered_json(call.arguments)}};
    std::string text = tojson(function);
    text.pop_back();  // the closing brace: the id goes inside
    if (i > 0) out += ", ";
    out += text + ", \"id\": \"" + mistral_call_id(call.id) + "\"}";
  }
  return out + "]" + eos;
}

std::string render_mistral(const std::string& bos, std::span<const ChatMessage> messages,
                           const ChatTools& tools) {
  std::optional<std::string_view> system;
  std::span<const ChatMessage> turns = messages;
  if (turns.front().role == "system") {
    system = turns.front().content;
    turns = turns.subspan(1);
  }
  check_mistral_turns(turns);
  // The template compares messages by value: a user message equal to the last one also
  // gets the tools.
  const ChatMessage* last_user = nullptr;
  for (const ChatMessage& m : turns) {
    if (m.role == "user") last_user = &m;
  }
  std::string out = bos;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    const ChatMessage& m = turns[i];
    if (m.role == "user") {
      if (!tools.empty() && m.content == last_user->content) out += mistral_tools(tools);
      out += "[INST] ";
      if (system && i + 1 == turns.size()) out += std::string(*system) + "\n\n";
      out += m.content + "[/INST]";
    } else if (!m.tool_calls.empty()) {
      out += mistral_calls(m, "</s>");
    } else if (m.role == "assistant") {
      out += " " + trim(m.content) + "</s>";
    } else {
      out += "[TOOL_RESULTS] {\"content\": " + m.content + ", \"call_id\": \"" +
             mistral_call_id(m.tool_call_id) + "\"}[/TOOL_RESULTS]";
    }
  }
  return out;
}

}  // namespace

std::string mistral_call_id(const std::string& id) {
  bool kept = id.size() == 9;
  for (char c : id) {
    kept = kept && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  }
  if (kept) return id;
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a
  for (char c : id) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  constexpr std::string_view kDigits =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string out;
  for (int i = 0; i < 9; ++i, hash /= kDigits.size()) out += kDigits[hash % kDigits.size()];
  return out;
}

std::string render_builtin(ChatFamily family, const std::string& bos_token,
                           std::span<const ChatMessage> messages, const ChatTools& tools) {
  check_roles(messages);
  switch (family) {
    case ChatFamily::chatml:
      return render_chatml(messages, tools);
    case ChatFamily::llama3:
      return render_llama3(bos_token, messages, tools);
    case ChatFamily::mistral:
      return render_mistral(bos_token, messages, tools);
  }
  throw std::invalid_argument("unknown chat family");
}

}  // namespace baton
