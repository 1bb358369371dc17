#include "baton/server/api/anthropic_messages.h"

#include <nlohmann/json.hpp>

#include "baton/server/http/sse.h"

namespace baton {
namespace {

using nlohmann::json;

std::string event(const char* name, const json& data) { return sse_named_event(name, dump(data)); }

json error_json(int status, const std::string& message) {
  return {{"type", "error"},
          {"error", {{"type", anthropic_error_type(status)}, {"message", message}}}};
}

}  // namespace

std::string anthropic_error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

std::string anthropic_error_body(const ApiError& error) {
  // Anthropic's shape has no "param": the message names the field, as Anthropic's do.
  std::string message = error.what();
  if (error.param() && message.find(*error.param()) == std::string::npos) {
    message = *error.param() + ": " + message;
  }
  return dump(error_json(error.status(), message));
}

HttpResponse anthropic_error_response(const ApiError& error) {
  HttpResponse response = error.response();
  response.body = anthropic_error_body(error);
  return response;
}

AnthropicFormat::AnthropicFormat(std::string id, std::string model, int prompt_tokens)
    : id_(std::move(id)), model_(std::move(model)), prompt_tokens_(prompt_tokens) {}

namespace {

struct StopReason {
  std::string reason;
  json sequence;  // the stop sequence that matched, or null
};

StopReason stop_reason(const GenerationResult& result) {
  if (result.finish == FinishReason::length) return {.reason = "max_tokens", .sequence = nullptr};
  if (result.stop_sequence) return {.reason = "stop_sequence", .sequence = *result.stop_sequence};
  return {.reason = "end_turn", .sequence = nullptr};
}

json usage(const GenerationResult& result) {
  return {{"input_tokens", result.prompt_tokens - result.cached_prompt_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", result.cached_prompt_tokens},
          {"output_tokens", result.tokens.size()}};
}

}  // namespace

std::string AnthropicFormat::whole(const GenerationResult& result) {
  const StopReason stop = stop_reason(result);
  const json body = {{"id", id_},
                     {"type", "message"},
                     {"role", "assistant"},
                     {"model", model_},
                     {"content", json::array({{{"type", "text"}, {"text", result.text}}})},
                     {"stop_reason", stop.reason},
                     {"stop_sequence", stop.sequence},
                     {"usage", usage(result)}};
  return dump(body);
}

std::string AnthropicFormat::stream_open() {
  const json message = {{"id", id_},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", model_},
                        {"content", json::array()},
                        {"stop_reason", nullptr},
                        {"stop_sequence", nullptr},
                        {"usage", {{"input_tokens", prompt_tokens_}, {"output_tokens", 0}}}};
  return event("message_start", {{"type", "message_start"}, {"message", message}}) +
         event("content_block_start", {{"type", "content_block_start"},
                                       {"index", 0},
                                       {"content_block", {{"type", "text"}, {"text", ""}}}}) +
         event("ping", {{"type", "ping"}});
}

std::string AnthropicFormat::stream_token(const TokenDelta& delta) {
  if (delta.text.empty()) return {};
  return event("content_block_delta", {{"type", "content_block_delta"},
                                       {"index", 0},
                                       {"delta", {{"type", "text_delta"}, {"text", delta.text}}}});
}

std::string AnthropicFormat::stream_close(const GenerationResult& result) {
  const StopReason stop = stop_reason(result);
  return event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}) +
         event("message_delta",
               {{"type", "message_delta"},
                {"delta", {{"stop_reason", stop.reason}, {"stop_sequence", stop.sequence}}},
                {"usage", usage(result)}}) +
         event("message_stop", {{"type", "message_stop"}});
}

std::string AnthropicFormat::stream_error(const ApiError& error) {
  return sse_named_event("error", anthropic_error_body(error));
}

HttpResponse AnthropicFormat::error_response(const ApiError& error) const {
  return anthropic_error_response(error);
}

}  // namespace baton
