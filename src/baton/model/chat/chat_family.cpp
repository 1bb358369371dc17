#include "baton/model/chat/chat_family.h"

#include <stdexcept>
#include <string>

namespace baton {

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

std::optional<ChatFamily> detect_chat_family(std::string_view jinja_text) {
  if (jinja_text.find("<|im_start|>") != std::string_view::npos) return ChatFamily::chatml;
  if (jinja_text.find("<|start_header_id|>") != std::string_view::npos) return ChatFamily::llama3;
  // Llama 2 also writes [INST], but with a <<SYS>> block: rendered as Mistral v3 it would
  // be subtly wrong, so it is no known family (an error that names the flag).
  if (jinja_text.find("<<SYS>>") != std::string_view::npos) return std::nullopt;
  if (jinja_text.find("[INST]") != std::string_view::npos) return ChatFamily::mistral;
  return std::nullopt;
}

}  // namespace baton
