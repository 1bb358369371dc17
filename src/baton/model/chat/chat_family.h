// The chat families baton renders with built-in code (chatml, llama3, mistral; see
// chat_template.h and builtin_chat_render.h), by name and as found in a template's text.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace baton {

enum class ChatFamily { chatml, llama3, mistral };

std::string_view to_string(ChatFamily family);

// "chatml" (or its alias "qwen"), "llama3", "mistral"; anything else throws
// std::invalid_argument listing the valid names.
ChatFamily parse_chat_family(std::string_view name);

// The family whose markers the Jinja text holds, checked in this order: <|im_start|>
// (chatml), <|start_header_id|> (llama3), [INST] (mistral) unless it also holds Llama 2's
// <<SYS>>. nullopt when none.
std::optional<ChatFamily> detect_chat_family(std::string_view jinja_text);

}  // namespace baton
