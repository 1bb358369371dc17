// Anthropic's Messages API (POST /v1/messages) on baton's chat engines: the response
// {"type": "message", "content": [{"type": "text", ...}], "stop_reason", "stop_sequence",
// "usage"}, the stream of named SSE events (message_start, content_block_start, ping,
// content_block_delta, content_block_stop, message_delta, message_stop; `error` when the
// request fails after the head) and the error body {"type": "error", "error": {"type",
// "message"}}, with the status and Retry-After of the ApiError it comes from. The request
// is parsed by parse_anthropic_call (peer_requests.h).
//
// Usage follows Anthropic's meaning: input_tokens are the prompt tokens that were not read
// from the prefix cache, cache_read_input_tokens those that were (their sum is the prompt).
// Thread-safety: AnthropicFormat as CompletionFormat; the functions are pure.
#pragma once

#include <memory>
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
  AnthropicFormat(std::string id, std::string model, int prompt_tokens);

  std::string whole(const GenerationResult& result) override;
  std::string stream_open() override;
  std::string stream_token(const TokenDelta& delta) override;
  std::string stream_close(const GenerationResult& result) override;
  std::string stream_error(const ApiError& error) override;
  HttpResponse error_response(const ApiError& error) const override;

 private:
  const std::string id_;
  const std::string model_;
  const int prompt_tokens_;
};

}  // namespace baton
