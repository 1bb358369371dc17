// Chat templates: turning a conversation into the prompt text an instruct model was trained
// on. By default baton runs the model's own Jinja template (chat_template.jinja or
// tokenizer_config.json's chat_template) with the Jinja engine of model/template/, given
// messages, add_generation_prompt and the special tokens of tokenizer_config.json, as
// transformers' apply_chat_template does. A family the user asks for (--chat-template,
// the serve config's chat_template) is rendered instead by built-in code that produces,
// for plain text messages (roles system/user/assistant, string contents) and
// add_generation_prompt=true, what the family's real template produces:
//
//   chatml   <|im_start|>{role}\n{content}<|im_end|>\n ... <|im_start|>assistant\n
//            Plain ChatML and Qwen3 (thinking on, the default) exactly. Qwen2/2.5 insert a
//            default system message ("You are Qwen, created by Alibaba Cloud. ...") when the
//            first message is not a system message; baton does not: send one to get it.
//            Qwen3 also differs for an assistant message after the last user message or one
//            whose content holds </think>, which a generation request does not contain.
//   llama3   {bos}<|start_header_id|>{role}<|end_header_id|>\n\n{trim(content)}<|eot_id|>
//            ... <|start_header_id|>assistant<|end_header_id|>\n\n
//            Llama 3 (Meta-Llama-3-*-Instruct) exactly. Llama 3.1+ templates also open with
//            a system header holding "Cutting Knowledge Date: December 2023" and a "Today
//            Date", with the system message inside it; baton does not add those lines.
//   mistral  {bos}[INST] {user}[/INST] {trim(assistant)}</s>[INST] ...[/INST]
//            Mistral v3 tokenizer (Mistral-7B-Instruct-v0.3, Mixtral-8x22B, Mistral Large
//            2407) exactly. The optional system message goes before the content of the last
//            message, followed by "\n\n", and only when that last message is from the user:
//            a conversation that ends with the assistant loses it, as in the real template.
//            After the system message, roles must alternate user/assistant/user/...
//
// With tools, tool calls or tool results, each family renders as builtin_chat_render.h says.
// trim() is Python's str.strip(), as Jinja's trim filter: Unicode whitespace at both ends.
// The text starts with the bos token where the family has one, so it is to be encoded
// without adding special tokens again.
// Thread-safety: pure functions and values.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "baton/model/chat/chat_family.h"
#include "baton/model/chat/chat_message.h"
#include "baton/model/chat/chat_tools.h"
#include "baton/model/chat/tool_call_format.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/files/model_source.h"

namespace baton {

namespace jinja {
class JinjaTemplate;
}

// The model's own template failed on a conversation (an undefined value used, a type
// error, a value past the output limit): a defect of the model's files that the client
// cannot fix, so not an std::invalid_argument (ErrorKind failure, HTTP 500). A template's
// raise_exception() refusing the conversation stays std::invalid_argument.
class ChatTemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// load_chat_template's error for a model whose files hold no template at all: such a
// model still serves raw completions. Any other load error refuses the model.
class NoChatTemplate : public ModelFileError {
 public:
  using ModelFileError::ModelFileError;
};

struct ChatTemplate {
  std::shared_ptr<const jinja::JinjaTemplate> jinja;  // the model's own; null: `family`
  ChatFamily family = ChatFamily::chatml;
  std::string bos_token;  // tokenizer_config.json's bos_token; empty when it has none
  // tokenizer_config.json's special tokens by name (bos_token, eos_token, ...): what
  // transformers hands the template.
  std::map<std::string, std::string> special_tokens;
  std::string source;  // the file the template came from, or "--chat-template flag"
  // How the model writes tool calls: detected from the template's text, or the family's.
  ToolCallFormat tool_call_format = ToolCallFormat::hermes;
};

// How the prompt ends after the conversation.
enum class ChatEnd {
  open_reply,     // the assistant's next turn opened (add_generation_prompt)
  as_is,          // the conversation as the template ends it (add_generation_prompt false)
  continue_last,  // cut after the final assistant message's text, for the model to go on
                  // (a prefill; transformers' continue_final_message)
};

// The prompt for `messages`, offering `tools` (none when empty: the template gets None).
// The model's own template gets them as transformers' apply_chat_template passes them (see
// chat_message_json.h; a template that fails on a call's arguments as a dict gets them as
// text; for a mistral tool_call_format, call ids go as mistral_call_id maps them, since
// Mistral's templates refuse ids that are not 9 characters); the built-in families render
// them in their own format (builtin_chat_render.h).
// Throws ChatTemplateError when the model's template fails,
// std::invalid_argument for an empty conversation, what the model's template refuses
// (raise_exception's message), a continue_last
// whose final message is not the assistant's or does not show in the rendered text, and,
// for the built-in families (which always open the reply), another end, a role other than
// system/user/assistant/tool (naming it) and what builtin_chat_render.h refuses.
std::string render(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                   ChatEnd end = ChatEnd::open_reply, const ChatTools& tools = {});

// The template of a Hugging Face model directory: chat_template.jinja (transformers 5) or
// else tokenizer_config.json's chat_template (a string, or a list of {name, template} of
// which the one named "default" is used), parsed as Jinja, and tokenizer_config.json's
// special tokens (strings or {"content": ...}). An override sets the family even when the
// model has no template. Throws NoChatTemplate (a ModelFileError) when there is no
// template and no override, and ModelFileError naming the file for malformed JSON or a
// template the Jinja engine cannot parse (with the line and the problem).
ChatTemplate load_chat_template(const ModelSource& source,
                                std::optional<ChatFamily> override_family);
inline ChatTemplate load_chat_template(const std::filesystem::path& path,
                                       std::optional<ChatFamily> override_family) {
  return load_chat_template(ModelSource::open(path), override_family);
}

}  // namespace baton
