#include "baton/server/api/responses_api.h"

#include <chrono>

#include "baton/server/http/sse.h"

namespace baton {
namespace {

using nlohmann::json;

bool complete(const GenerationResult& result) { return result.finish != FinishReason::length; }

json usage_json(const GenerationResult& result) {
  const int output = static_cast<int>(result.tokens.size());
  return {{"input_tokens", result.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", result.cached_prompt_tokens}}},
          {"output_tokens", output},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", result.prompt_tokens + output}};
}

json text_part(const std::string& text) {
  return {{"type", "output_text"},
          {"text", text},
          {"annotations", json::array()},
          {"logprobs", json::array()}};
}

// The one output message: in progress and empty, or done with its text.
json message_item(const ResponseEcho& echo, const std::string& status, json content) {
  return {{"id", echo.item_id},
          {"type", "message"},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

json done_item(const ResponseEcho& echo, const GenerationResult& result) {
  return message_item(echo, complete(result) ? "completed" : "incomplete",
                      json::array({text_part(result.text)}));
}

json response_json(const ResponseEcho& echo, const std::string& status, json output, json usage,
                   json incomplete, json error) {
  return {{"id", echo.id},
          {"object", "response"},
          {"created_at", echo.created_at},
          {"status", status},
          {"background", false},
          {"error", std::move(error)},
          {"incomplete_details", std::move(incomplete)},
          {"instructions", echo.instructions},
          {"max_output_tokens", echo.max_output_tokens},
          {"max_tool_calls", nullptr},
          {"model", echo.model},
          {"output", std::move(output)},
          {"parallel_tool_calls", false},
          {"previous_response_id", nullptr},
          {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
          {"service_tier", "default"},
          {"store", false},
          {"temperature", echo.temperature},
          {"text", {{"format", {{"type", "text"}}}}},
          {"tool_choice", "auto"},
          {"tools", json::array()},
          {"top_logprobs", 0},
          {"top_p", echo.top_p},
          {"truncation", "disabled"},
          {"usage", std::move(usage)},
          {"user", echo.user},
          {"metadata", echo.metadata}};
}

json finished_response(const ResponseEcho& echo, const GenerationResult& result) {
  const bool done = complete(result);
  return response_json(echo, done ? "completed" : "incomplete",
                       json::array({done_item(echo, result)}), usage_json(result),
                       done ? json(nullptr) : json{{"reason", "max_output_tokens"}}, nullptr);
}

}  // namespace

ResponseEcho response_echo(const ResponsesCall& call, const std::string& model,
                           std::string_view unique, const SamplingParams& sampling) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  ResponseEcho echo;
  echo.id = "resp_" + std::string(unique);
  echo.item_id = "msg_" + std::string(unique);
  echo.created_at = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  echo.model = model;
  echo.instructions = call.instructions ? json(*call.instructions) : json(nullptr);
  echo.max_output_tokens = call.call.max_tokens ? json(*call.call.max_tokens) : json(nullptr);
  echo.temperature = sampling.temperature;
  echo.top_p = sampling.top_p;
  for (const auto& [key, value] : call.metadata) echo.metadata[key] = value;
  echo.user = call.user ? json(*call.user) : json(nullptr);
  return echo;
}

ResponsesFormat::ResponsesFormat(ResponseEcho echo) : echo_(std::move(echo)) {}

std::string ResponsesFormat::event(const std::string& type, json data) {
  data["type"] = type;
  data["sequence_number"] = sequence_++;
  return sse_named_event(type, dump(data));
}

std::string ResponsesFormat::whole(const GenerationResult& result) {
  return dump(finished_response(echo_, result));
}

std::string ResponsesFormat::stream_open() {
  const json started =
      response_json(echo_, "in_progress", json::array(), nullptr, nullptr, nullptr);
  // One statement per event: each takes the next sequence number.
  std::string out = event("response.created", {{"response", started}});
  out += event("response.in_progress", {{"response", started}});
  out += event("response.output_item.added",
               {{"output_index", 0}, {"item", message_item(echo_, "in_progress", json::array())}});
  out += event("response.content_part.added", {{"item_id", echo_.item_id},
                                               {"output_index", 0},
                                               {"content_index", 0},
                                               {"part", text_part("")}});
  return out;
}

std::string ResponsesFormat::stream_token(const TokenDelta& delta) {
  if (delta.text.empty()) return {};
  return event("response.output_text.delta", {{"item_id", echo_.item_id},
                                              {"output_index", 0},
                                              {"content_index", 0},
                                              {"delta", delta.text},
                                              {"logprobs", json::array()}});
}

std::string ResponsesFormat::stream_close(const GenerationResult& result) {
  const json where = {{"item_id", echo_.item_id}, {"output_index", 0}, {"content_index", 0}};
  json text_done = where;
  text_done["text"] = result.text;
  text_done["logprobs"] = json::array();
  json part_done = where;
  part_done["part"] = text_part(result.text);
  std::string out = event("response.output_text.done", std::move(text_done));
  out += event("response.content_part.done", std::move(part_done));
  out +=
      event("response.output_item.done", {{"output_index", 0}, {"item", done_item(echo_, result)}});
  out += event(complete(result) ? "response.completed" : "response.incomplete",
               {{"response", finished_response(echo_, result)}});
  return out;
}

std::string ResponsesFormat::stream_error(const ApiError& error) {
  const json code = error.code() ? json(*error.code()) : json(nullptr);
  const json param = error.param() ? json(*error.param()) : json(nullptr);
  // The fields at the top level are the SDK's ResponseErrorEvent; the nested "error" is
  // what makes OpenAI's clients raise it as an API error.
  const json data = {
      {"code", code},
      {"message", error.what()},
      {"param", param},
      {"error",
       {{"type", error.type()}, {"code", code}, {"message", error.what()}, {"param", param}}}};
  const json failed =
      response_json(echo_, "failed", json::array(), nullptr, nullptr,
                    {{"code", error.status() == 429 ? "rate_limit_exceeded" : "server_error"},
                     {"message", error.what()}});
  std::string out = event("error", data);
  out += event("response.failed", {{"response", failed}});
  return out;
}

HttpResponse ResponsesFormat::error_response(const ApiError& error) const {
  return error.response();
}

}  // namespace baton
