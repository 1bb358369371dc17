#include "baton/server/api/peer_requests.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "baton/server/api/json_fields.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;
using namespace json_fields;

std::string at(const std::string& where, std::size_t i) {
  return where + "[" + std::to_string(i) + "]";
}

// A string, or a list of parts {"type", "text"} of the `allowed` types, as one text.
std::string text_content(const json& content, const std::string& where,
                         const std::set<std::string>& allowed, const char* kind) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_parameter(where, "'" + where + "' must be a string or a list of " + kind);
  }
  std::string text;
  for (std::size_t j = 0; j < content.size(); ++j) {
    const std::string part = at(where, j);
    const json& p = content[j];
    const json* type = p.is_object() ? field(p, "type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      throw bad_parameter(part, "'" + part + "' must be an object with a 'type'");
    }
    if (allowed.count(type->get<std::string>()) == 0) {
      throw bad_parameter(part + ".type",
                          std::string(kind) + " of type '" + type->get<std::string>() +
                              "' are not supported by baton; only text",
                          "unsupported_parameter");
    }
    const json* part_text = field(p, "text");
    if (part_text == nullptr)
      throw bad_parameter(part + ".text", "'" + part + ".text' is required");
    text += string(*part_text, part + ".text");
  }
  return text;
}

void read_top_p(const json& object, SamplingRequest& s) {
  if (const json* v = field(object, "top_p")) {
    s.top_p = number(*v, "top_p", 0, 1);
    if (*s.top_p <= 0) throw bad_parameter("top_p", "'top_p' must be greater than 0");
  }
}

void read_stream_flag(const json& object, CompletionCall& call) {
  if (const json* v = field(object, "stream")) call.stream = boolean(*v, "stream");
}

void refuse(const std::string& param, const std::string& why) {
  throw bad_parameter(param, why, "unsupported_parameter");
}

// ---- Anthropic Messages ----

std::vector<ChatMessage> anthropic_messages(const json& object) {
  std::vector<ChatMessage> out;
  if (const json* system = field(object, "system")) {
    std::string text = text_content(*system, "system", {"text"}, "system blocks");
    if (!text.empty()) out.push_back({"system", std::move(text)});
  }
  const json* messages = field(object, "messages");
  if (messages == nullptr) throw bad_parameter("messages", "'messages' is required");
  if (!messages->is_array() || messages->empty()) {
    throw bad_parameter("messages", "'messages' must be a non-empty list");
  }
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const std::string where = at("messages", i);
    const json& m = (*messages)[i];
    if (!m.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
    const json* role = field(m, "role");
    if (role == nullptr) throw bad_parameter(where + ".role", "'" + where + ".role' is required");
    const std::string r = string(*role, where + ".role");
    if (r != "user" && r != "assistant") {
      throw bad_parameter(where + ".role", "'" + where + ".role' must be 'user' or 'assistant'");
    }
    const json* content = field(m, "content");
    if (content == nullptr) {
      throw bad_parameter(where + ".content", "'" + where + ".content' is required");
    }
    out.push_back({r, text_content(*content, where + ".content", {"text"}, "content blocks")});
  }
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

ChatMessage response_input_item(const json& item, const std::string& where) {
  if (!item.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
  if (const json* type = field(item, "type")) {
    const std::string t = string(*type, where + ".type");
    if (t != "message") {
      refuse(where + ".type", "input items of type '" + t +
                                  "' are not supported by baton; "
                                  "only messages");
    }
  }
  const json* role = field(item, "role");
  if (role == nullptr) throw bad_parameter(where + ".role", "'" + where + ".role' is required");
  std::string r = string(*role, where + ".role");
  if (r == "developer") r = "system";
  if (r != "system" && r != "user" && r != "assistant") {
    throw bad_parameter(where + ".role", "'" + where +
                                             ".role' must be user, assistant, system "
                                             "or developer");
  }
  const json* content = field(item, "content");
  if (content == nullptr) {
    throw bad_parameter(where + ".content", "'" + where + ".content' is required");
  }
  return {.role = r,
          .content = text_content(*content, where + ".content", {"input_text", "output_text"},
                                  "content parts")};
}

std::vector<ChatMessage> response_input(const json& object,
                                        const std::optional<std::string>& instructions) {
  std::vector<ChatMessage> out;
  if (instructions && !instructions->empty()) out.push_back({"system", *instructions});
  const json* input = field(object, "input");
  if (input == nullptr) throw bad_parameter("input", "'input' is required");
  if (input->is_string()) {
    if (input->get<std::string>().empty())
      throw bad_parameter("input", "'input' must not be empty");
    out.push_back({"user", input->get<std::string>()});
    return out;
  }
  if (!input->is_array() || input->empty()) {
    throw bad_parameter("input", "'input' must be a string or a non-empty list of messages");
  }
  for (std::size_t i = 0; i < input->size(); ++i) {
    out.push_back(response_input_item((*input)[i], at("input", i)));
  }
  return out;
}

// Fields that only select what baton does anyway, or nothing: checked, not used.
void check_responses_options(const json& object) {
  if (const json* tools = field(object, "tools")) {
    if (!tools->is_array() || !tools->empty()) refuse("tools", "'tools' is not supported by baton");
  }
  if (const json* choice = field(object, "tool_choice")) {
    if (!choice->is_string() || (*choice != "none" && *choice != "auto")) {
      refuse("tool_choice", "'tool_choice' is not supported by baton (no tools)");
    }
  }
  if (const json* text = field(object, "text")) {
    const json* format = text->is_object() ? field(*text, "format") : nullptr;
    const json* type = format != nullptr && format->is_object() ? field(*format, "type") : nullptr;
    if (!text->is_object() || (format != nullptr && (type == nullptr || *type != "text"))) {
      refuse("text", "only 'text' {\"format\": {\"type\": \"text\"}} is supported");
    }
  }
  if (const json* truncation = field(object, "truncation")) {
    if (string(*truncation, "truncation") != "disabled") {
      refuse("truncation", "only 'truncation': 'disabled' is supported");
    }
  }
  if (const json* include = field(object, "include")) {
    if (!include->is_array() || !include->empty()) {
      refuse("include", "'include' is not supported by baton");
    }
  }
  if (const json* background = field(object, "background")) {
    if (boolean(*background, "background")) refuse("background", "'background' is not supported");
  }
  if (const json* top = field(object, "top_logprobs")) {
    if (integer(*top, "top_logprobs", 0, 20) != 0) {
      refuse("top_logprobs", "'top_logprobs' is not supported by baton's Responses API");
    }
  }
  if (const json* v = field(object, "parallel_tool_calls"))
    (void)boolean(*v, "parallel_tool_calls");
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
                "top_p", "top_k", "stream", "metadata", "service_tier", "thinking"},
               {"tools", "tool_choice", "mcp_servers", "container", "context_management"});
  CompletionCall call;
  call.kind = CompletionCall::Kind::chat;
  call.model = model_name(object);
  const json* max_tokens = field(object, "max_tokens");
  if (max_tokens == nullptr) throw bad_parameter("max_tokens", "'max_tokens' is required");
  call.max_tokens = static_cast<int>(integer(*max_tokens, "max_tokens", 1, 1 << 24));
  call.messages = anthropic_messages(object);
  // Anthropic continues a final assistant message (a prefill of the reply).
  if (call.messages.back().role == "assistant") call.chat_end = ChatEnd::continue_last;
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
      refuse("thinking", "extended thinking is not supported by baton");
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
  return out;
}

TokenizeCall parse_tokenize_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object, {"model", "prompt", "messages", "add_generation_prompt"}, {});
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
