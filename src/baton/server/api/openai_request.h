// The request bodies of the OpenAI API as baton reads them: chat completions,
// completions and embeddings, parsed and checked into plain values. Every mistake is an
// ApiError (400) naming the field: malformed JSON, a wrong type, a value out of range, a
// field baton does not support (n > 1, audio, ...), or one the API does not have. Fields a
// client may send that change nothing here (user, store, metadata) are accepted.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/input_processor.h"
#include "baton/engine/output/output_request.h"
#include "baton/model/chat/chat_template.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

struct CompletionCall {
  enum class Kind { chat, text };
  Kind kind = Kind::chat;
  std::string model;
  std::vector<ChatMessage> messages;        // chat
  std::optional<std::string> prompt;        // text: a string ...
  std::optional<std::vector<TokenId>> prompt_tokens;  // ... or token ids
  std::optional<int> max_tokens;
  SamplingRequest sampling;
  std::vector<std::string> stop;
  bool logprobs = false;
  int top_logprobs = 0;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool ignore_eos = false;     // vLLM's extension, for benchmarks
  // chat: how the prompt ends (vLLM's add_generation_prompt and continue_final_message;
  // Anthropic's final assistant message, a prefill, is continue_last).
  ChatEnd chat_end = ChatEnd::open_reply;
  ToolUse tool_use{};                // chat: tools, tool_choice, parallel_tool_calls
  ResponseFormat response_format{};  // chat: response_format
};

struct EmbeddingCall {
  std::string model;
  std::vector<std::string> texts;                // a string or a list of strings ...
  std::vector<std::vector<TokenId>> token_inputs;  // ... or token ids, one list per input
  bool base64 = false;                           // encoding_format
};

// Throw ApiError (400) for anything that is not a valid request of that kind.
CompletionCall parse_completion_call(std::string_view body, CompletionCall::Kind kind);
EmbeddingCall parse_embedding_call(std::string_view body);

}  // namespace baton
