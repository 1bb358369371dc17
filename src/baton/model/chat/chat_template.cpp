#include "baton/model/chat/chat_template.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "baton/common/read_file.h"
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
std::string trim(const std::string& text) { return jinja::python_strip(text, true, true); }

void check_roles(std::span<const ChatMessage> messages) {
  if (messages.empty()) throw std::invalid_argument("a conversation needs at least one message");
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      throw std::invalid_argument("unknown chat role '" + m.role +
                                  "': the roles are system, user and assistant");
    }
  }
}

std::string render_chatml(std::span<const ChatMessage> messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  return out + "<|im_start|>assistant\n";
}

std::string render_llama3(const ChatTemplate& t, std::span<const ChatMessage> messages) {
  std::string out = t.bos_token;
  for (const ChatMessage& m : messages) {
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n";
    out += trim(m.content);
    out += "<|eot_id|>";
  }
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

// After the optional leading system message: user, assistant, user, ... as v3 requires.
void check_mistral_turns(std::span<const ChatMessage> turns) {
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (turns[i].role == "system") {
      throw std::invalid_argument(
          "mistral chat template: only the first message may be a system message");
    }
    if ((turns[i].role == "user") != (i % 2 == 0)) {
      throw std::invalid_argument(
          "mistral chat template: after the optional system message, conversation roles must "
          "alternate user/assistant/user/assistant/...");
    }
  }
}

// v3 has no system turn: the system text opens the last message when that is the user's.
std::string render_mistral(const ChatTemplate& t, std::span<const ChatMessage> messages) {
  std::optional<std::string_view> system;
  std::span<const ChatMessage> turns = messages;
  if (turns.front().role == "system") {
    system = turns.front().content;
    turns = turns.subspan(1);
  }
  check_mistral_turns(turns);
  std::string out = t.bos_token;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (turns[i].role == "user") {
      out += "[INST] ";
      if (system && i + 1 == turns.size()) out += std::string(*system) + "\n\n";
      out += turns[i].content + "[/INST]";
    } else {
      out += " ";
      out += trim(turns[i].content);
      out += "</s>";
    }
  }
  return out;
}

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

// The variables transformers' apply_chat_template passes: messages, tools and documents
// (None when the request has none), add_generation_prompt and the special tokens.
jinja::Dict template_variables(const ChatTemplate& t, std::span<const ChatMessage> messages,
                               bool add_generation_prompt) {
  using jinja::Value;
  jinja::List list;
  for (const ChatMessage& m : messages) {
    list.push_back(Value::from(jinja::Dict{{Value::from("role"), Value::from(m.role)},
                                           {Value::from("content"), Value::from(m.content)}}));
  }
  jinja::Dict variables{{Value::from("messages"), Value::from(std::move(list))},
                        {Value::from("tools"), Value::none()},
                        {Value::from("documents"), Value::none()},
                        {Value::from("add_generation_prompt"), Value::from(add_generation_prompt)}};
  for (const auto& [name, token] : t.special_tokens) {
    variables.emplace_back(Value::from(name), Value::from(token));
  }
  return variables;
}

std::string render_jinja(const ChatTemplate& t, std::span<const ChatMessage> messages,
                         bool add_generation_prompt) {
  if (messages.empty()) throw std::invalid_argument("a conversation needs at least one message");
  try {
    return t.jinja->render(template_variables(t, messages, add_generation_prompt));
  } catch (const jinja::TemplateRaised& error) {
    throw std::invalid_argument("the model's chat template (" + template_name(t) +
                                ") refuses this conversation: " + error.what());
  } catch (const jinja::TemplateError& error) {
    throw ChatTemplateError("the model's chat template (" + template_name(t) +
                            ") failed: " + error.what());
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
std::string render_continued(const ChatTemplate& t, std::span<const ChatMessage> messages) {
  if (messages.empty() || messages.back().role != "assistant" ||
      trim(messages.back().content).empty()) {
    throw std::invalid_argument(
        "only a final assistant message with text can be continued (a prefill)");
  }
  const std::string text = render_jinja(t, messages, false);
  for (const std::string& final : {messages.back().content, trim(messages.back().content)}) {
    if (const std::size_t at = text.rfind(final); at != std::string::npos) {
      return text.substr(0, at + final.size());
    }
  }
  throw std::invalid_argument("the model's chat template (" + template_name(t) +
                              ") does not show the final assistant message's text, so it "
                              "cannot be continued");
}

}  // namespace

std::string_view to_string(ChatFamily family) {
  switch (family) {
    case ChatFamily::chatml:
      return "chatml";
    case ChatFamily::llama3:
      return "llama3";
    case ChatFamily::mistral:
      return "mistral";
  }
  return "unknown";
}

ChatFamily parse_chat_family(std::string_view name) {
  if (name == "chatml" || name == "qwen") return ChatFamily::chatml;
  if (name == "llama3") return ChatFamily::llama3;
  if (name == "mistral") return ChatFamily::mistral;
  throw std::invalid_argument("unknown chat template '" + std::string(name) +
                              "': valid names are chatml (alias qwen), llama3, mistral");
}

std::string render(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                   ChatEnd end) {
  if (chat_template.jinja) {
    if (end == ChatEnd::continue_last) return render_continued(chat_template, messages);
    return render_jinja(chat_template, messages, end == ChatEnd::open_reply);
  }
  if (end != ChatEnd::open_reply) {
    throw std::invalid_argument("the built-in chat family " +
                                std::string(to_string(chat_template.family)) +
                                " always opens the assistant's turn: use the model's template");
  }
  check_roles(messages);
  switch (chat_template.family) {
    case ChatFamily::chatml:
      return render_chatml(messages);
    case ChatFamily::llama3:
      return render_llama3(chat_template, messages);
    case ChatFamily::mistral:
      return render_mistral(chat_template, messages);
  }
  throw std::invalid_argument("unknown chat family");
}

std::optional<ChatFamily> detect_chat_family(std::string_view jinja_text) {
  if (jinja_text.find("<|im_start|>") != std::string_view::npos) return ChatFamily::chatml;
  if (jinja_text.find("<|start_header_id|>") != std::string_view::npos) return ChatFamily::llama3;
  // Llama 2 also writes [INST], but with a <<SYS>> block: rendered as Mistral v3 it would
  // be subtly wrong, so it is no known family (an error that names the flag).
  if (jinja_text.find("<<SYS>>") != std::string_view::npos) return std::nullopt;
  if (jinja_text.find("[INST]") != std::string_view::npos) return ChatFamily::mistral;
  return std::nullopt;
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
  return result;
}

}  // namespace baton
