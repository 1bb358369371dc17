#include "baton/server/api/peer_requests.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "baton/server/api/anthropic_tools.h"
#include "baton/server/api/json_fields.h"
#include "baton/server/api/peer_fields.h"
#include "baton/server/api/responses_input.h"
#include "baton/server/api/tool_fields.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;
using namespace json_fields;

void read_top_p(const json& object, SamplingRequest& s) {
  if (const json* v = field(object, "top_p")) {
    s.top_p = number(*v, "top_p", 0, 1);
    if (*s.top_p <= 0) throw bad_parameter("top_p", "'top_p' must be greater than 0");
  }
}

void read_stream_flag(const json& object, CompletionCall& call) {
  if (const json* v = field(object, "stream")) call.stream = boolean(*v, "stream");
}

// ---- Anthropic Messages ----

std::vector<ChatMessage> anthropic_messages(const json& object, std::string_view body) {
  std::vector<ChatMessage> out;
  if (const json* system = field(object, "system")) {
    std::string text = content_text(*system, "system", {"text"}, "system blocks");
    if (!text.empty()) out.push_back({.role = "system", .content = std::move(text)});
  }
  const json* messages = field(object, "messages");
  if (messages == nullptr) throw bad_parameter("messages", "'messages' is required");
  if (!messages->is_array() || messages->empty()) {
    throw bad_parameter("messages", "'messages' must be a non-empty list");
  }
  append_anthropic_turns(*messages, ordered_field(body, "messages"), out);
  return out;
}

std::vector<std::string> stop_sequences(const json& value) {
  if (!value.is_array()) {
    throw bad_parameter("stop_sequences", "'stop_sequences' must be a list of strings");
  }
  if (value.size() > kMaxStopSequences) {
    throw bad_parameter("stop_sequences", "'stop_sequences' holds at most " +
                                              std::to_string(kMaxStopSequences) + " strings");
  }
  std::vector<std::string> stops;
  for (const json& s : value) {
    stops.push_back(string(s, "stop_sequences"));
    if (stops.back().empty()) {
      throw bad_parameter("stop_sequences", "a stop sequence must not be empty");
    }
  }
  return stops;
}

// ---- OpenAI Responses ----

std::vector<ChatMessage> response_input(const json& object,
                                        const std::optional<std::string>& instructions) {
  std::vector<ChatMessage> out;
  if (instructions && !instructions->empty()) {
    out.push_back({.role = "system", .content = *instructions});
  }
  const json* input = field(object, "input");
  if (input == nullptr) throw bad_parameter("input", "'input' is required");
  if (input->is_string()) {
    if (input->get<std::string>().empty())
      throw bad_parameter("input", "'input' must not be empty");
    out.push_back({.role = "user", .content = input->get<std::string>()});
    return out;
  }
  if (!input->is_array() || input->empty()) {
    throw bad_parameter("input", "'input' must be a string or a non-empty list of items");
  }
  append_response_items(*input, out);
  return out;
}

// Fields that only select what baton does anyway, or nothing: checked, not used.
void check_responses_options(const json& object) {
  if (const json* truncation = field(object, "truncation")) {
    if (string(*truncation, "truncation") != "disabled") {
      refuse_unsupported("truncation", "only 'truncation': 'disabled' is supported");
    }
  }
  if (const json* include = field(object, "include")) {
    if (!include->is_array() || !include->empty()) {
      refuse_unsupported("include", "'include' is not supported by baton");
    }
  }
  if (const json* background = field(object, "background")) {
    if (boolean(*background, "background"))
      refuse_unsupported("background", "'background' is not supported");
  }
  if (const json* top = field(object, "top_logprobs")) {
    if (integer(*top, "top_logprobs", 0, 20) != 0) {
      refuse_unsupported("top_logprobs",
                         "'top_logprobs' is not supported by baton's Responses API");
    }
  }
  for (const char* name : {"service_tier", "safety_identifier", "prompt_cache_key"}) {
    if (const json* v = field(object, name)) (void)string(*v, name);
  }
  if (const json* v = field(object, "max_tool_calls")) {
    (void)integer(*v, "max_tool_calls", 0, std::numeric_limits<int>::max());
  }
}

std::vector<std::pair<std::string, std::string>> metadata(const json& value) {
  if (!value.is_object()) throw bad_parameter("metadata", "'metadata' must be an object");
  if (value.size() > 16) throw bad_parameter("metadata", "'metadata' holds at most 16 keys");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, v] : value.items()) out.emplace_back(key, string(v, "metadata." + key));
  return out;
}

void read_responses_stream(const json& object, CompletionCall& call) {
  read_stream_flag(object, call);
  read_stream_options(object, call.stream, [](const std::string& key, const json& value) {
    if (key != "include_obfuscation") return false;
    if (!value.is_null()) (void)boolean(value, "stream_options." + key);
    return true;
  });
}

}  // namespace

CompletionCall parse_anthropic_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object,
               {"model", "max_tokens", "messages", "system", "stop_sequences", "temperature",
                "top_p", "top_k", "stream", "metadata", "service_tier", "thinking", "tools",
                "tool_choice", "output_config"},
               {"mcp_servers", "container", "context_management"});
  CompletionCall call;
  call.kind = CompletionCall::Kind::chat;
  call.model = model_name(object);
  const json* max_tokens = field(object, "max_tokens");
  if (max_tokens == nullptr) throw bad_parameter("max_tokens", "'max_tokens' is required");
  call.max_tokens = static_cast<int>(integer(*max_tokens, "max_tokens", 1, 1 << 24));
  call.messages = anthropic_messages(object, body);
  call.tool_use = anthropic_tool_use(object, body);
  call.response_format = anthropic_output_format(object, body);
  // Anthropic continues a final assistant message (a prefill of the reply); one that called
  // tools is done, and the reply opens after it.
  if (call.messages.back().role == "assistant" && call.messages.back().tool_calls.empty()) {
    call.chat_end = ChatEnd::continue_last;
  }
  if (const json* stops = field(object, "stop_sequences")) call.stop = stop_sequences(*stops);
  SamplingRequest& s = call.sampling;
  if (const json* v = field(object, "temperature")) s.temperature = number(*v, "temperature", 0, 1);
  read_top_p(object, s);
  if (const json* v = field(object, "top_k")) {
    s.top_k = static_cast<int>(integer(*v, "top_k", 0, std::numeric_limits<int>::max()));
  }
  read_stream_flag(object, call);
  if (const json* v = field(object, "metadata"); v != nullptr && !v->is_object()) {
    throw bad_parameter("metadata", "'metadata' must be an object");
  }
  if (const json* v = field(object, "service_tier")) (void)string(*v, "service_tier");
  if (const json* thinking = field(object, "thinking")) {
    const json* type = thinking->is_object() ? field(*thinking, "type") : nullptr;
    if (type == nullptr || *type != "disabled") {
      refuse_unsupported("thinking", "extended thinking is not supported by baton");
    }
  }
  return call;
}

ResponsesCall parse_responses_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object,
               {"model",
                "input",
                "instructions",
                "max_output_tokens",
                "temperature",
                "top_p",
                "stream",
                "stream_options",
                "store",
                "metadata",
                "user",
                "tools",
                "tool_choice",
                "parallel_tool_calls",
                "text",
                "truncation",
                "service_tier",
                "safety_identifier",
                "prompt_cache_key",
                "include",
                "background",
                "top_logprobs",
                "max_tool_calls"},
               {"previous_response_id", "conversation", "prompt", "reasoning"});
  ResponsesCall out;
  CompletionCall& call = out.call;
  call.kind = CompletionCall::Kind::chat;
  call.model = model_name(object);
  if (const json* v = field(object, "instructions")) out.instructions = string(*v, "instructions");
  call.messages = response_input(object, out.instructions);
  if (const json* v = field(object, "max_output_tokens")) {
    call.max_tokens = static_cast<int>(integer(*v, "max_output_tokens", 1, 1 << 24));
  }
  if (const json* v = field(object, "temperature")) {
    call.sampling.temperature = number(*v, "temperature", 0, 2);
  }
  read_top_p(object, call.sampling);
  read_responses_stream(object, call);
  if (const json* v = field(object, "store")) out.store = boolean(*v, "store");
  if (const json* v = field(object, "metadata")) out.metadata = metadata(*v);
  if (const json* v = field(object, "user")) out.user = string(*v, "user");
  check_responses_options(object);
  call.tool_use = responses_tool_use(object, body);
  call.response_format = responses_text_format(object, body);
  out.tools = field(object, "tools") != nullptr ? object["tools"] : json::array();
  out.tool_choice = field(object, "tool_choice") != nullptr ? object["tool_choice"] : json("auto");
  const json* text = field(object, "text");
  const json* format = text != nullptr ? field(*text, "format") : nullptr;
  out.text_format = format != nullptr ? *format : json{{"type", "text"}};
  return out;
}

TokenizeCall parse_tokenize_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object, {"model", "prompt", "messages", "add_generation_prompt", "tools"}, {});
  TokenizeCall call;
  call.model = model_name(object);
  const json* prompt = field(object, "prompt");
  const json* messages = field(object, "messages");
  if ((prompt == nullptr) == (messages == nullptr)) {
    throw bad_parameter(prompt == nullptr ? "prompt" : "messages",
                        "give exactly one of 'prompt' and 'messages'");
  }
  if (prompt != nullptr) {
    call.prompt = string(*prompt, "prompt");
  } else {
    // The same messages as /v1/chat/completions, checked by the same parser.
    const json chat = {{"model", call.model}, {"messages", *messages}};
    call.messages = parse_completion_call(chat.dump(), CompletionCall::Kind::chat).messages;
  }
  if (field(object, "tools") != nullptr) {
    if (prompt != nullptr) throw bad_parameter("tools", "'tools' goes with 'messages'");
    call.tools = checked_tools(ordered_field(body, "tools"));  // as /v1/chat/completions's
  }
  if (const json* v = field(object, "add_generation_prompt")) {
    if (prompt != nullptr) {
      throw bad_parameter("add_generation_prompt", "'add_generation_prompt' goes with 'messages'");
    }
    if (!boolean(*v, "add_generation_prompt")) call.chat_end = ChatEnd::as_is;
  }
  return call;
}

DetokenizeCall parse_detokenize_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object, {"model", "tokens"}, {});
  DetokenizeCall call;
  call.model = model_name(object);
  const json* tokens = field(object, "tokens");
  if (tokens == nullptr) throw bad_parameter("tokens", "'tokens' is required");
  if (!tokens->is_array()) throw bad_parameter("tokens", "'tokens' must be a list of token ids");
  if (!tokens->empty()) call.tokens = token_list(*tokens, "tokens");
  return call;
}

}  // namespace baton
