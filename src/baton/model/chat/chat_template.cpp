#include "baton/model/chat/chat_template.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "baton/common/read_file.h"
#include "baton/model/chat/builtin_chat_render.h"
#include "baton/model/chat/chat_message_json.h"
#include "baton/model/files/gguf_file.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/template/jinja_builtins.h"
#include "baton/model/template/jinja_template.h"
#include "baton/model/tokenizer/gguf_tokenizer.h"

namespace baton {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kFlagSource = "--chat-template flag";

// Jinja's trim filter: Python's str.strip(), as the Jinja engine has it.
std::string stripped(const std::string& text) { return jinja::python_strip(text, true, true); }

// The file's text, or nullopt when it does not exist.
std::optional<std::string> read_if_present(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    return read_file(path);
  } catch (const FileReadError& error) {
    throw ModelFileError(path.string(), "cannot be read (" + error.reason() + ")");
  }
}

std::optional<json> read_json_if_present(const fs::path& path) {
  std::optional<std::string> text = read_if_present(path);
  if (!text) return std::nullopt;
  json root = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    throw ModelFileError(path.string(), "is not a JSON object");
  }
  return root;
}

// Older files write special tokens as AddedToken objects: {"content": "<s>", ...}.
std::optional<std::string> special_token_of(const json& config, const std::string& key,
                                            const fs::path& path) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
  }
  throw ModelFileError(path.string(), "'" + key + "' must be a string or {\"content\": string}");
}

std::map<std::string, std::string> special_tokens_of(const json& config, const fs::path& path) {
  std::map<std::string, std::string> tokens;
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (auto token = special_token_of(config, key, path)) tokens[key] = *token;
  }
  return tokens;
}

// The template's file name: an error a client sees names no directory of the server.
std::string template_name(const ChatTemplate& t) { return fs::path(t.source).filename().string(); }

// Mistral's templates refuse call ids that are not 9 characters (OpenAI's are longer): the
// ids go as mistral_call_id maps them, a call and its result alike, as vLLM also does.
ChatMessage with_mistral_ids(const ChatMessage& m) {
  ChatMessage out = m;
  for (ToolCall& call : out.tool_calls) call.id = mistral_call_id(call.id);
  if (!out.tool_call_id.empty()) out.tool_call_id = mistral_call_id(out.tool_call_id);
  return out;
}

// The variables transformers' apply_chat_template passes: messages, tools and documents
// (None when the request has none), add_generation_prompt and the special tokens. A tool
// call's arguments go as a dict, as transformers documents, or as the client's text.
jinja::Dict template_variables(const ChatTemplate& t, std::span<const ChatMessage> messages,
                               const ChatTools& tools, bool add_generation_prompt,
                               bool arguments_as_text) {
  using jinja::Value;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  const bool mistral = t.tool_call_format == ToolCallFormat::mistral_v3 ||
                       t.tool_call_format == ToolCallFormat::mistral_v11;
  for (const ChatMessage& m : messages) {
    list.push_back(message_json(mistral ? with_mistral_ids(m) : m, arguments_as_text));
  }
  jinja::Dict variables{
      {Value::from("messages"), Value::from_json(list)},
      {Value::from("tools"),
       tools.empty() ? Value::none() : Value::from_json(nlohmann::ordered_json(tools))},
      {Value::from("documents"), Value::none()},
      {Value::from("add_generation_prompt"), Value::from(add_generation_prompt)}};
  for (const auto& [name, token] : t.special_tokens) {
    variables.emplace_back(Value::from(name), Value::from(token));
  }
  return variables;
}

std::string render_jinja_once(const ChatTemplate& t, std::span<const ChatMessage> messages,
                              const ChatTools& tools, bool add_generation_prompt,
                              bool arguments_as_text) {
  try {
    return t.jinja->render(
        template_variables(t, messages, tools, add_generation_prompt, arguments_as_text));
  } catch (const jinja::TemplateRaised& error) {
    throw std::invalid_argument("the model's chat template (" + template_name(t) +
                                ") refuses this conversation: " + error.what());
  } catch (const jinja::TemplateError& error) {
    throw ChatTemplateError("the model's chat template (" + template_name(t) +
                            ") failed: " + error.what());
  }
}

bool has_tool_calls(std::span<const ChatMessage> messages) {
  for (const ChatMessage& m : messages) {
    if (!m.tool_calls.empty()) return true;
  }
  return false;
}

// Templates that write a call's arguments as text (functionary v3.1, DeepSeek V3.1 add
// them to strings) fail on a dict: such a template gets the client's text instead, as
// llama.cpp also finds out by trying.
std::string render_jinja(const ChatTemplate& t, std::span<const ChatMessage> messages,
                         const ChatTools& tools, bool add_generation_prompt) {
  if (messages.empty()) throw std::invalid_argument("a conversation needs at least one message");
  try {
    return render_jinja_once(t, messages, tools, add_generation_prompt, false);
  } catch (const ChatTemplateError&) {
    if (!has_tool_calls(messages)) throw;
    return render_jinja_once(t, messages, tools, add_generation_prompt, true);
  }
}

// chat_template as a string, or as a list of named templates of which "default" is the
// one transformers uses when no name is asked for.
std::optional<std::string> template_of(const json& config, const fs::path& path) {
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) {
    throw ModelFileError(path.string(), "'chat_template' must be a string or a list");
  }
  for (const json& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string()) {
      throw ModelFileError(path.string(),
                           "'chat_template' list entries must be {\"name\": string, "
                           "\"template\": string}");
    }
    if (entry["name"] == "default") return entry["template"].get<std::string>();
  }
  throw ModelFileError(path.string(), "'chat_template' lists no template named 'default'");
}

// As transformers' continue_final_message: the conversation rendered as it is, cut right
// after the final assistant message's text (or its stripped text, which templates that
// trim show), so that generation goes on from there.
std::string render_continued(const ChatTemplate& t, std::span<const ChatMessage> messages,
                             const ChatTools& tools) {
  if (messages.empty() || messages.back().role != "assistant" ||
      stripped(messages.back().content).empty()) {
    throw std::invalid_argument(
        "only a final assistant message with text can be continued (a prefill)");
  }
  const std::string text = render_jinja(t, messages, tools, false);
  for (const std::string& final : {messages.back().content, stripped(messages.back().content)}) {
    if (const std::size_t at = text.rfind(final); at != std::string::npos) {
      return text.substr(0, at + final.size());
    }
  }
  throw std::invalid_argument("the model's chat template (" + template_name(t) +
                              ") does not show the final assistant message's text, so it "
                              "cannot be continued");
}

}  // namespace

std::string render(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                   ChatEnd end, const ChatTools& tools) {
  if (chat_template.jinja) {
    if (end == ChatEnd::continue_last) return render_continued(chat_template, messages, tools);
    return render_jinja(chat_template, messages, tools, end == ChatEnd::open_reply);
  }
  if (end != ChatEnd::open_reply) {
    throw std::invalid_argument("the built-in chat family " +
                                std::string(to_string(chat_template.family)) +
                                " always opens the assistant's turn: use the model's template");
  }
  return render_builtin(chat_template.family, chat_template.bos_token, messages, tools);
}

// As in transformers, chat_template.jinja wins over the key in tokenizer_config.json.
ChatTemplate load_chat_template(const ModelSource& source,
                                std::optional<ChatFamily> override_family) {
  // A GGUF file carries what tokenizer_config.json would.
  const GgufFile* gguf = source.gguf();
  const fs::path config_path = gguf ? gguf->path() : source.file("tokenizer_config.json");
  const fs::path jinja_path = source.file("chat_template.jinja");
  const std::optional<json> config =
      gguf ? std::optional<json>(gguf_tokenizer_config(gguf->header()))
           : read_json_if_present(config_path);
  ChatTemplate result;
  if (config) {
    result.special_tokens = special_tokens_of(*config, config_path);
    if (auto bos = result.special_tokens.find("bos_token"); bos != result.special_tokens.end()) {
      result.bos_token = bos->second;
    }
  }
  if (override_family) {
    result.family = *override_family;
    result.tool_call_format = tool_call_format_of(*override_family);
    result.source = kFlagSource;
    return result;
  }
  std::optional<std::string> text = read_if_present(jinja_path);
  fs::path template_path = jinja_path;
  if (!text && config) {
    text = template_of(*config, config_path);
    template_path = config_path;
  }
  if (!text) {
    throw NoChatTemplate(config_path.string(),
                         "no chat template (neither chat_template in this file nor "
                         "chat_template.jinja); pass --chat-template chatml|llama3|mistral or "
                         "send a raw prompt");
  }
  try {
    result.jinja = std::make_shared<const jinja::JinjaTemplate>(*text);
  } catch (const jinja::TemplateError& error) {
    throw ModelFileError(template_path.string(),
                         std::string("chat template: ") + error.what() +
                             "; pass --chat-template chatml|llama3|mistral to use a built-in one");
  }
  result.source = template_path.string();
  result.tool_call_format = detect_tool_call_format(*text);
  return result;
}

}  // namespace baton
