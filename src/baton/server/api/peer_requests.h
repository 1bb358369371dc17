// The request bodies of the other APIs `baton serve` speaks besides OpenAI's chat,
// completions and embeddings: Anthropic's Messages (POST /v1/messages), OpenAI's Responses
// (POST /v1/responses, stateless) and vLLM's POST /tokenize and /detokenize. The two
// generation APIs become a chat CompletionCall (the system text first, then the turns), so
// they run through the same chat template, sampling defaults and engine as
// /v1/chat/completions, tools and structured outputs included (anthropic_tools.h,
// responses_input.h). As there, every mistake is an ApiError (400) naming the field, and
// what baton cannot do (server tools, images, stored responses, ...) is refused, not ignored.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/model/chat/chat_template.h"
#include "baton/model/chat/chat_tools.h"
#include "baton/model/tokenizer/token_id.h"
#include "baton/server/api/openai_request.h"

namespace baton {

// Anthropic's stop_sequences: more than OpenAI's 4, as its API allows.
constexpr std::size_t kMaxStopSequences = 16;

// POST /v1/messages: max_tokens (required), messages (user/assistant; text, tool_use and
// tool_result blocks), system, stop_sequences, temperature ([0, 1]), top_p, top_k, stream,
// tools, tool_choice, output_config.format; metadata is ignored.
CompletionCall parse_anthropic_call(std::string_view body);

// POST /v1/responses: the chat call and what the response object echoes back.
struct ResponsesCall {
  CompletionCall call;                      // kind chat; max_output_tokens in max_tokens
  std::optional<std::string> instructions;  // also the call's first (system) message
  std::vector<std::pair<std::string, std::string>> metadata;
  bool store = false;  // accepted; nothing is ever stored
  std::optional<std::string> user;
  // As the request gave them, for the response to echo.
  nlohmann::json tools = nlohmann::json::array();
  nlohmann::json tool_choice = "auto";
  nlohmann::json text_format = {{"type", "text"}};
};
ResponsesCall parse_responses_call(std::string_view body);

// POST /tokenize: a prompt as it is, or a conversation (with `tools`, as Chat Completions
// takes them) in the model's chat template.
struct TokenizeCall {
  std::string model;
  std::optional<std::string> prompt;       // either this ...
  std::vector<ChatMessage> messages;       // ... or this (chat models only)
  ChatEnd chat_end = ChatEnd::open_reply;  // messages: as add_generation_prompt says
  ChatTools tools;                         // messages: the tools the template renders
};
TokenizeCall parse_tokenize_call(std::string_view body);

// POST /detokenize. Ids are checked against the model's vocabulary by the route.
struct DetokenizeCall {
  std::string model;
  std::vector<TokenId> tokens;
};
DetokenizeCall parse_detokenize_call(std::string_view body);

}  // namespace baton
