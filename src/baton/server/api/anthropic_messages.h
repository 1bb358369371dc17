// Anthropic's Messages API (POST /v1/messages) on baton's chat engines: the response
// {"type": "message", "content": [{"type": "text", ...}], "stop_reason", "stop_sequence",
// "usage"}, the stream of named SSE events (message_start, content_block_start, ping,
// content_block_delta, content_block_stop, message_delta, message_stop; `error` when the
// request fails after the head) and the error body {"type": "error", "error": {"type",
// "message"}}, with the status and Retry-After of the ApiError it comes from. The request
// is parsed by parse_anthropic_call (peer_requests.h).
//
// With tools (a ToolCallFormat given), the text is read for calls: the message's content is
// a text block (when there is text) then a tool_use block {id: toolu_..., name, input} per
// call, stop_reason "tool_use"; streamed, each block opens (content_block_start; a tool_use
// block with input {}) as its first piece comes, a call's arguments follow as input_json_delta
// fragments that concatenate to its input's JSON, and each block closes before the next
// opens, its index one more. Without tools, one text block as always.
//
// Usage follows Anthropic's meaning: input_tokens are the prompt tokens that were not read
// from the prefix cache, cache_read_input_tokens those that were (their sum is the prompt).
// Thread-safety: AnthropicFormat as CompletionFormat; the functions are pure.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baton/server/api/completion_format.h"

namespace baton {

// Anthropic's error type for an HTTP status: invalid_request_error (400 and other 4xx),
// authentication_error (401), permission_error (403), not_found_error (404),
// request_too_large (413), rate_limit_error (429), api_error (500 and other 5xx),
// overloaded_error (503).
std::string anthropic_error_type(int status);
// The message names the field (`param: ...`) where the ApiError has one.
std::string anthropic_error_body(const ApiError& error);
HttpResponse anthropic_error_response(const ApiError& error);

class AnthropicFormat final : public CompletionFormat {
 public:
  // `id`: msg_...; `prompt_tokens`: for message_start, before the engine says how many
  // came from the cache.
  AnthropicFormat(std::string id, std::string model, int prompt_tokens,
                  std::optional<ToolCallFormat> tool_calls = std::nullopt);

  std::string whole(const GenerationResult& result) override;
  std::string stream_open() override;
  std::string stream_token(const TokenDelta& delta) override;
  std::string stream_close(const GenerationResult& result) override;
  std::string stream_error(const ApiError& error) override;
  HttpResponse error_response(const ApiError& error) const override;

 private:
  std::string whole_with_tools(const GenerationResult& result) const;
  // The events of parsed pieces of the text: blocks opened, filled and closed.
  std::string tool_events(const std::vector<ToolStreamPiece>& pieces);
  std::string open_block(nlohmann::json block);
  std::string close_block();

  const std::string id_;
  const std::string model_;
  const int prompt_tokens_;
  std::optional<ToolOutput> tools_;
  // Streamed with tools: the blocks opened so far, and the kind of the one open.
  enum class Block { none, text, tool_use };
  int blocks_ = 0;
  Block open_ = Block::none;
};

}  // namespace baton
