// OpenAI's Responses API (POST /v1/responses), stateless, on baton's chat engines: the
// response object (status completed, or incomplete with incomplete_details.reason
// "max_output_tokens") with one assistant message of one output_text part, and its stream
// of named SSE events, each with "type" and "sequence_number" (0, 1, ...):
// response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta..., response.output_text.done,
// response.content_part.done, response.output_item.done, then response.completed or
// response.incomplete. An error after the head is an `error` event followed by
// response.failed. HTTP errors keep OpenAI's shape. Nothing is stored: store is echoed as
// false. The request is parsed by parse_responses_call (peer_requests.h).
// Thread-safety: ResponsesFormat as CompletionFormat.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "baton/server/api/completion_format.h"
#include "baton/server/api/peer_requests.h"

namespace baton {

// What the response object repeats besides the output.
struct ResponseEcho {
  std::string id;       // resp_...
  std::string item_id;  // msg_..., the one output message
  std::int64_t created_at = 0;
  std::string model;
  nlohmann::json instructions;       // string or null
  nlohmann::json max_output_tokens;  // integer or null
  double temperature = 1.0;          // as the request ran (the model's defaults filled in)
  double top_p = 1.0;
  nlohmann::json metadata = nlohmann::json::object();
  nlohmann::json user;  // string or null
};

// `unique` makes the ids unique (the server's start time and a serial number).
ResponseEcho response_echo(const ResponsesCall& call, const std::string& model,
                           std::string_view unique, const SamplingParams& sampling);

class ResponsesFormat final : public CompletionFormat {
 public:
  explicit ResponsesFormat(ResponseEcho echo);

  std::string whole(const GenerationResult& result) override;
  std::string stream_open() override;
  std::string stream_token(const TokenDelta& delta) override;
  std::string stream_close(const GenerationResult& result) override;
  std::string stream_error(const ApiError& error) override;
  HttpResponse error_response(const ApiError& error) const override;

 private:
  std::string event(const std::string& type, nlohmann::json data);

  const ResponseEcho echo_;
  std::int64_t sequence_ = 0;
};

}  // namespace baton
