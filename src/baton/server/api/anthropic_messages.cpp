#include "baton/server/api/anthropic_messages.h"

#include <nlohmann/json.hpp>

#include "baton/server/http/sse.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

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

AnthropicFormat::AnthropicFormat(std::string id, std::string model, int prompt_tokens,
                                 std::optional<ToolCallFormat> tool_calls)
    : id_(std::move(id)), model_(std::move(model)), prompt_tokens_(prompt_tokens) {
  // Call ids unique in the server's life: the message's id and the call's index.
  if (tool_calls) tools_.emplace(*tool_calls, "toolu_" + id_.substr(id_.find('_') + 1) + "_");
}

namespace {

struct StopReason {
  std::string reason;
  json sequence;  // the stop sequence that matched, or null
};

// `calls`: the answer called tools (and so waits for their results).
StopReason stop_reason(const GenerationResult& result, bool calls = false) {
  if (result.finish == FinishReason::length) return {.reason = "max_tokens", .sequence = nullptr};
  if (calls) return {.reason = "tool_use", .sequence = nullptr};
  if (result.stop_sequence) return {.reason = "stop_sequence", .sequence = *result.stop_sequence};
  return {.reason = "end_turn", .sequence = nullptr};
}

json usage(const GenerationResult& result) {
  return {{"input_tokens", result.prompt_tokens - result.cached_prompt_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", result.cached_prompt_tokens},
          {"output_tokens", result.tokens.size()}};
}

// A call's arguments as the tool_use block's input, keys in the model's order. The parser
// gives only JSON objects; anything else would be an empty input, never an exception.
ordered_json call_input(const std::string& arguments) {
  ordered_json input = ordered_json::parse(arguments, nullptr, false);
  return input.is_object() ? input : ordered_json::object();
}

}  // namespace

std::string AnthropicFormat::whole_with_tools(const GenerationResult& result) const {
  const SplitOutput split = tools_->whole(result.text);
  ordered_json content = ordered_json::array();
  if (!split.content.empty() || split.calls.empty()) {
    content.push_back({{"type", "text"}, {"text", split.content}});
  }
  for (const OutputToolCall& call : split.calls) {
    content.push_back({{"type", "tool_use"},
                       {"id", call.id},
                       {"name", call.name},
                       {"input", call_input(call.arguments)}});
  }
  const StopReason stop = stop_reason(result, !split.calls.empty());
  const ordered_json body = {{"id", id_},
                             {"type", "message"},
                             {"role", "assistant"},
                             {"model", model_},
                             {"content", std::move(content)},
                             {"stop_reason", stop.reason},
                             {"stop_sequence", ordered_json(stop.sequence)},
                             {"usage", ordered_json(usage(result))}};
  return dump(body);
}

std::string AnthropicFormat::whole(const GenerationResult& result) {
  if (tools_) return whole_with_tools(result);
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

std::string AnthropicFormat::open_block(json block) {
  open_ = block["type"] == "text" ? Block::text : Block::tool_use;
  return event(
      "content_block_start",
      {{"type", "content_block_start"}, {"index", blocks_++}, {"content_block", std::move(block)}});
}

std::string AnthropicFormat::close_block() {
  if (open_ == Block::none) return {};
  open_ = Block::none;
  return event("content_block_stop", {{"type", "content_block_stop"}, {"index", blocks_ - 1}});
}

std::string AnthropicFormat::tool_events(const std::vector<ToolStreamPiece>& pieces) {
  std::string out;
  for (const ToolStreamPiece& piece : pieces) {
    json delta;
    if (piece.call_index < 0) {
      if (piece.content.empty()) continue;
      if (open_ != Block::text) {
        out += close_block();
        out += open_block({{"type", "text"}, {"text", ""}});
      }
      delta = {{"type", "text_delta"}, {"text", piece.content}};
    } else {
      if (!piece.name.empty()) {  // a call begins: its block, then its arguments
        out += close_block();
        out += open_block({{"type", "tool_use"},
                           {"id", tools_->id(piece.call_index)},
                           {"name", piece.name},
                           {"input", json::object()}});
      }
      if (piece.arguments.empty()) continue;
      delta = {{"type", "input_json_delta"}, {"partial_json", piece.arguments}};
    }
    out += event(
        "content_block_delta",
        {{"type", "content_block_delta"}, {"index", blocks_ - 1}, {"delta", std::move(delta)}});
  }
  return out;
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
  std::string start = event("message_start", {{"type", "message_start"}, {"message", message}});
  // With tools, blocks open as their text comes: a text block or a call's.
  if (tools_) return start + event("ping", {{"type", "ping"}});
  return start +
         event("content_block_start", {{"type", "content_block_start"},
                                       {"index", 0},
                                       {"content_block", {{"type", "text"}, {"text", ""}}}}) +
         event("ping", {{"type", "ping"}});
}

std::string AnthropicFormat::stream_token(const TokenDelta& delta) {
  if (tools_) return tool_events(tools_->feed(delta.text));
  if (delta.text.empty()) return {};
  return event("content_block_delta", {{"type", "content_block_delta"},
                                       {"index", 0},
                                       {"delta", {{"type", "text_delta"}, {"text", delta.text}}}});
}

std::string AnthropicFormat::stream_close(const GenerationResult& result) {
  std::string out;
  if (tools_) {
    out = tool_events(tools_->finish());
    // An answer of neither text nor calls is one empty text block, as unstreamed.
    if (blocks_ == 0) out += open_block({{"type", "text"}, {"text", ""}});
    out += close_block();
  } else {
    out = event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
  }
  const StopReason stop = stop_reason(result, tools_ && tools_->calls() > 0);
  return out +
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
