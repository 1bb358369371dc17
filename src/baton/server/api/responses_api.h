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
//
// With tools (a ToolCallFormat given), the text is read for calls: the output is a message
// item (when there is text) then a function_call item {id: fc_..., call_id: call_...,
// name, arguments, status} per call. Streamed, items open as their first piece comes (the
// message's events as above; a call's response.output_item.added with empty arguments, its
// response.function_call_arguments.delta fragments, which concatenate to its arguments,
// then .done and response.output_item.done), each closing before the next opens, its
// output_index one more; the final response lists the items as streamed.
// Thread-safety: ResponsesFormat as CompletionFormat.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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
  // The request's tool fields and text.format, echoed.
  nlohmann::json tools = nlohmann::json::array();
  nlohmann::json tool_choice = "auto";
  bool parallel_tool_calls = true;
  nlohmann::json text_format = {{"type", "text"}};
};

// `unique` makes the ids unique (the server's start time and a serial number).
ResponseEcho response_echo(const ResponsesCall& call, const std::string& model,
                           std::string_view unique, const SamplingParams& sampling);

class ResponsesFormat final : public CompletionFormat {
 public:
  explicit ResponsesFormat(ResponseEcho echo,
                           std::optional<ToolCallFormat> tool_calls = std::nullopt);

  std::string whole(const GenerationResult& result) override;
  std::string stream_open() override;
  std::string stream_token(const TokenDelta& delta) override;
  std::string stream_close(const GenerationResult& result) override;
  std::string stream_error(const ApiError& error) override;
  HttpResponse error_response(const ApiError& error) const override;

 private:
  std::string event(const std::string& type, nlohmann::json data);
  std::string whole_with_tools(const GenerationResult& result) const;
  // Streamed with tools: the events of parsed pieces of the text, and of the output items
  // they open and close.
  std::string tool_events(const std::vector<ToolStreamPiece>& pieces);
  std::string open_message();
  std::string open_call(int index, const std::string& name);
  std::string close_item(const std::string& status);

  const ResponseEcho echo_;
  std::int64_t sequence_ = 0;
  std::optional<ToolOutput> tools_;
  std::string unique_;                              // what makes this response's ids unique
  nlohmann::json items_ = nlohmann::json::array();  // the items streamed and closed
  nlohmann::json open_item_;                        // the item open, or null
  std::string open_text_;                           // its text, or its arguments, so far
  int messages_ = 0;                                // message items opened
};

}  // namespace baton
