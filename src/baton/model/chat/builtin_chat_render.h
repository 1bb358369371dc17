// The built-in chat families (chatml, llama3, mistral: see chat_template.h) with tools, tool
// calls and tool results, each in its model family's documented format:
//
//   chatml   Qwen2.5 / Qwen3 (Hermes-style): the tools in the system message, after its
//            text, as "# Tools ... <tools>\n{tool json}\n...</tools> ..." with the
//            instruction to answer with <tool_call>{"name": ..., "arguments": ...}
//            </tool_call>; calls written that way, results as <tool_response>...
//            </tool_response> inside one user turn per run of tool messages.
//   llama3   Llama 3.1 / 3.2's JSON tool calling: a system header with "Environment: ipython",
//            the knowledge date and "Today Date: 26 Jul 2024" (3.1's fixed date; 3.2
//            prints the day it runs), the tools (JSON, indent 4) in the first user message
//            with the instruction to answer {"name": ..., "parameters": ...}; a call
//            written so; results under the ipython role as a JSON string. One call per
//            assistant message, as the template requires.
//   mistral  Mistral v3 (Mistral-7B-Instruct-v0.3): [AVAILABLE_TOOLS] [...][/AVAILABLE_TOOLS]
//            before the last user message, [TOOL_CALLS] [{"name", "arguments", "id"}]</s>,
//            [TOOL_RESULTS] {"content": ..., "call_id": ...}[/TOOL_RESULTS]. The template
//            refuses ids that are not 9 characters; baton keeps ids of 9 letters and digits
//            and maps any other id to 9 letters and digits (the same id to the same nine,
//            so a result still names its call).
//
// With these, what Qwen3's, Llama 3.2's (given date_string "26 Jul 2024") and Mistral v0.3's
// templates render, as tests/data/chat_templates/tool_reference.json shows.
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>

#include "baton/model/chat/chat_family.h"
#include "baton/model/chat/chat_message.h"
#include "baton/model/chat/chat_tools.h"

namespace baton {

// The prompt, opening the assistant's reply. std::invalid_argument for an empty
// conversation, an unknown role (naming it), and what the family's template refuses.
std::string render_builtin(ChatFamily family, const std::string& bos_token,
                           std::span<const ChatMessage> messages, const ChatTools& tools);

// The 9 letters and digits Mistral's template takes for `id` (see above).
std::string mistral_call_id(const std::string& id);

}  // namespace baton
