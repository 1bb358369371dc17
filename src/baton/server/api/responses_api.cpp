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
          {"parallel_tool_calls", echo.parallel_tool_calls},
          {"previous_response_id", nullptr},
          {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
          {"service_tier", "default"},
          {"store", false},
          {"temperature", echo.temperature},
          {"text", {{"format", echo.text_format}}},
          {"tool_choice", echo.tool_choice},
          {"tools", echo.tools},
          {"top_logprobs", 0},
          {"top_p", echo.top_p},
          {"truncation", "disabled"},
          {"usage", std::move(usage)},
          {"user", echo.user},
          {"metadata", echo.metadata}};
}

json finished_response(const ResponseEcho& echo, const GenerationResult& result, json output) {
  const bool done = complete(result);
  return response_json(echo, done ? "completed" : "incomplete", std::move(output),
                       usage_json(result),
                       done ? json(nullptr) : json{{"reason", "max_output_tokens"}}, nullptr);
}

json finished_response(const ResponseEcho& echo, const GenerationResult& result) {
  return finished_response(echo, result, json::array({done_item(echo, result)}));
}

json call_item(const std::string& id, const std::string& call_id, const std::string& name,
               const std::string& arguments, const std::string& status) {
  return {{"id", id},     {"type", "function_call"}, {"status", status}, {"call_id", call_id},
          {"name", name}, {"arguments", arguments}};
}

// The id of function_call item number `index` of a response.
std::string call_item_id(const std::string& unique, int index) {
  return "fc_" + unique + "_" + std::to_string(index);
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
  echo.tools = call.tools;
  echo.tool_choice = call.tool_choice;
  echo.parallel_tool_calls = call.call.tool_use.parallel;
  echo.text_format = call.text_format;
  return echo;
}

ResponsesFormat::ResponsesFormat(ResponseEcho echo, std::optional<ToolCallFormat> tool_calls)
    : echo_(std::move(echo)), unique_(echo_.id.substr(echo_.id.find('_') + 1)) {
  if (tool_calls) tools_.emplace(*tool_calls, "call_" + unique_ + "_");
}

std::string ResponsesFormat::whole_with_tools(const GenerationResult& result) const {
  const SplitOutput split = tools_->whole(result.text);
  json output = json::array();
  if (!split.content.empty() || split.calls.empty()) {
    output.push_back(message_item(echo_, complete(result) ? "completed" : "incomplete",
                                  json::array({text_part(split.content)})));
  }
  for (std::size_t i = 0; i < split.calls.size(); ++i) {
    const OutputToolCall& call = split.calls[i];
    output.push_back(call_item(call_item_id(unique_, static_cast<int>(i)), call.id, call.name,
                               call.arguments, "completed"));
  }
  return dump(finished_response(echo_, result, std::move(output)));
}

std::string ResponsesFormat::open_message() {
  const std::string id =
      messages_ == 0 ? echo_.item_id : echo_.item_id + "_" + std::to_string(messages_);
  ++messages_;
  open_item_ = message_item(echo_, "in_progress", json::array());
  open_item_["id"] = id;
  open_text_.clear();
  const std::size_t index = items_.size();
  std::string out =
      event("response.output_item.added", {{"output_index", index}, {"item", open_item_}});
  out += event(
      "response.content_part.added",
      {{"item_id", id}, {"output_index", index}, {"content_index", 0}, {"part", text_part("")}});
  return out;
}

std::string ResponsesFormat::open_call(int index, const std::string& name) {
  open_item_ = call_item(call_item_id(unique_, index), tools_->id(index), name, "", "in_progress");
  open_text_.clear();
  return event("response.output_item.added",
               {{"output_index", items_.size()}, {"item", open_item_}});
}

std::string ResponsesFormat::close_item(const std::string& status) {
  if (open_item_.is_null()) return {};
  json item = std::move(open_item_);
  open_item_ = nullptr;
  item["status"] = status;
  const json where = {{"item_id", item["id"]}, {"output_index", items_.size()}};
  std::string out;
  if (item["type"] == "message") {
    item["content"] = json::array({text_part(open_text_)});
    json text_done = where;
    text_done["content_index"] = 0;
    text_done["text"] = open_text_;
    text_done["logprobs"] = json::array();
    json part_done = where;
    part_done["content_index"] = 0;
    part_done["part"] = text_part(open_text_);
    out += event("response.output_text.done", std::move(text_done));
    out += event("response.content_part.done", std::move(part_done));
  } else {
    item["arguments"] = open_text_;
    json arguments_done = where;
    arguments_done["name"] = item["name"];
    arguments_done["arguments"] = open_text_;
    out += event("response.function_call_arguments.done", std::move(arguments_done));
  }
  out += event("response.output_item.done", {{"output_index", items_.size()}, {"item", item}});
  items_.push_back(std::move(item));
  return out;
}

std::string ResponsesFormat::tool_events(const std::vector<ToolStreamPiece>& pieces) {
  std::string out;
  for (const ToolStreamPiece& piece : pieces) {
    const bool call = piece.call_index >= 0;
    const std::string& text = call ? piece.arguments : piece.content;
    if (call && !piece.name.empty()) {  // a call begins
      out += close_item("completed");
      out += open_call(piece.call_index, piece.name);
    }
    if (text.empty()) continue;
    if (!call && (open_item_.is_null() || open_item_["type"] != "message")) {
      out += close_item("completed");
      out += open_message();
    }
    open_text_ += text;
    json delta = {{"item_id", open_item_["id"]}, {"output_index", items_.size()}, {"delta", text}};
    if (call) {
      out += event("response.function_call_arguments.delta", std::move(delta));
    } else {
      delta["content_index"] = 0;
      delta["logprobs"] = json::array();
      out += event("response.output_text.delta", std::move(delta));
    }
  }
  return out;
}

std::string ResponsesFormat::event(const std::string& type, json data) {
  data["type"] = type;
  data["sequence_number"] = sequence_++;
  return sse_named_event(type, dump(data));
}

std::string ResponsesFormat::whole(const GenerationResult& result) {
  if (tools_) return whole_with_tools(result);
  return dump(finished_response(echo_, result));
}

std::string ResponsesFormat::stream_open() {
  const json started =
      response_json(echo_, "in_progress", json::array(), nullptr, nullptr, nullptr);
  // One statement per event: each takes the next sequence number.
  std::string out = event("response.created", {{"response", started}});
  out += event("response.in_progress", {{"response", started}});
  if (tools_) return out;  // items open as their text comes: a message or a call
  out += event("response.output_item.added",
               {{"output_index", 0}, {"item", message_item(echo_, "in_progress", json::array())}});
  out += event("response.content_part.added", {{"item_id", echo_.item_id},
                                               {"output_index", 0},
                                               {"content_index", 0},
                                               {"part", text_part("")}});
  return out;
}

std::string ResponsesFormat::stream_token(const TokenDelta& delta) {
  if (tools_) return tool_events(tools_->feed(delta.text));
  if (delta.text.empty()) return {};
  return event("response.output_text.delta", {{"item_id", echo_.item_id},
                                              {"output_index", 0},
                                              {"content_index", 0},
                                              {"delta", delta.text},
                                              {"logprobs", json::array()}});
}

std::string ResponsesFormat::stream_close(const GenerationResult& result) {
  if (tools_) {
    std::string out = tool_events(tools_->finish());
    // An answer of neither text nor calls is one empty message, as unstreamed.
    if (items_.empty() && open_item_.is_null()) out += open_message();
    out += close_item(complete(result) ? "completed" : "incomplete");
    out += event(complete(result) ? "response.completed" : "response.incomplete",
                 {{"response", finished_response(echo_, result, items_)}});
    return out;
  }
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
