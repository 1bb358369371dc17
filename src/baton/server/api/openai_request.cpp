#include "baton/server/api/openai_request.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "baton/server/api/json_fields.h"
#include "baton/server/api/logit_bias_field.h"
#include "baton/server/api/sampling_limits.h"
#include "baton/server/api/tool_fields.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;
using namespace json_fields;

std::vector<std::string> stop_strings(const json& value) {
  std::vector<std::string> stops;
  if (value.is_string()) {
    stops.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    if (value.size() > 4) throw bad_parameter("stop", "'stop' holds at most 4 strings");
    for (const json& s : value) stops.push_back(string(s, "stop"));
  } else {
    throw bad_parameter("stop", "'stop' must be a string or a list of strings");
  }
  for (const std::string& s : stops) {
    if (s.empty()) throw bad_parameter("stop", "a stop string must not be empty");
  }
  return stops;
}

std::string message_content(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad_parameter(where, "'" + where + "' must be a string or a list of content parts");
  }
  std::string text;
  for (std::size_t j = 0; j < content.size(); ++j) {
    const std::string part = where + "[" + std::to_string(j) + "]";
    const json& p = content[j];
    const json* type = p.is_object() ? field(p, "type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      throw bad_parameter(part, "'" + part + "' must be an object with a 'type'");
    }
    if (type->get<std::string>() != "text") {
      throw bad_parameter(
          part + ".type",
          "content parts of type '" + type->get<std::string>() + "' are not supported; only 'text'",
          "unsupported_parameter");
    }
    const json* part_text = field(p, "text");
    if (part_text == nullptr)
      throw bad_parameter(part + ".text", "'" + part + ".text' is required");
    text += string(*part_text, part + ".text");
  }
  return text;
}

std::vector<ToolCall> tool_calls(const json& calls, const std::string& where) {
  if (!calls.is_array()) throw bad_parameter(where, "'" + where + "' must be a list");
  std::vector<ToolCall> out;
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const std::string at = where + "[" + std::to_string(k) + "]";
    const json& c = calls[k];
    const json* type = c.is_object() ? field(c, "type") : nullptr;
    const json* function = c.is_object() ? field(c, "function") : nullptr;
    if (type != nullptr && *type != "function") {
      throw bad_parameter(at + ".type", "'" + at + ".type' must be 'function'");
    }
    if (function == nullptr || !function->is_object()) {
      throw bad_parameter(at + ".function", "'" + at + ".function' is required");
    }
    const json* id = field(c, "id");
    const json* name = field(*function, "name");
    const json* arguments = field(*function, "arguments");
    if (name == nullptr)
      throw bad_parameter(at + ".function.name", "'" + at + ".function.name' is required");
    out.push_back({.id = id == nullptr ? std::string() : string(*id, at + ".id"),
                   .name = string(*name, at + ".function.name"),
                   .arguments = arguments == nullptr
                                    ? std::string("{}")
                                    : string(*arguments, at + ".function.arguments")});
  }
  return out;
}

ChatMessage chat_message(const json& m, const std::string& where) {
  if (!m.is_object()) throw bad_parameter(where, "'" + where + "' must be an object");
  const json* role = field(m, "role");
  if (role == nullptr) throw bad_parameter(where + ".role", "'" + where + ".role' is required");
  std::string r = string(*role, where + ".role");
  if (r == "developer") r = "system";  // the newer name of the system role
  if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
    throw bad_parameter(where + ".role",
                        "role '" + r +
                            "' is not supported; use system, developer, user, "
                            "assistant or tool",
                        "unsupported_parameter");
  }
  for (const char* unsupported : {"function_call", "audio"}) {
    if (field(m, unsupported) != nullptr) {
      throw bad_parameter(where + "." + unsupported,
                          "'" + std::string(unsupported) + "' is not supported; use tool_calls",
                          "unsupported_parameter");
    }
  }
  ChatMessage message{.role = r, .content = ""};
  if (const json* calls = field(m, "tool_calls"); calls != nullptr) {
    if (r != "assistant") {
      throw bad_parameter(where + ".tool_calls", "only an assistant message has 'tool_calls'");
    }
    message.tool_calls = tool_calls(*calls, where + ".tool_calls");
  }
  const json* content = field(m, "content");
  if (content != nullptr) {
    message.content = message_content(*content, where + ".content");
  } else if (message.tool_calls.empty()) {  // an assistant's calls may come without text
    throw bad_parameter(where + ".content", "'" + where + ".content' is required");
  }
  if (r == "tool") {
    const json* id = field(m, "tool_call_id");
    if (id == nullptr) {
      throw bad_parameter(where + ".tool_call_id", "'" + where + ".tool_call_id' is required");
    }
    message.tool_call_id = string(*id, where + ".tool_call_id");
    if (const json* name = field(m, "name")) message.name = string(*name, where + ".name");
  }
  return message;
}

std::vector<ChatMessage> chat_messages(const json& object) {
  const json* messages = field(object, "messages");
  if (messages == nullptr) throw bad_parameter("messages", "'messages' is required");
  if (!messages->is_array() || messages->empty()) {
    throw bad_parameter("messages", "'messages' must be a non-empty list");
  }
  std::vector<ChatMessage> out;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    out.push_back(chat_message((*messages)[i], "messages[" + std::to_string(i) + "]"));
  }
  check_tool_results(out, "messages");
  return out;
}

// tools, tool_choice and parallel_tool_calls; the tools with their keys in the client's order.
ToolUse read_tool_use(const json& object, std::string_view body) {
  ToolUse use;
  if (field(object, "tools") != nullptr) use.tools = checked_tools(ordered_field(body, "tools"));
  if (const json* choice = field(object, "tool_choice")) read_tool_choice(*choice, use);
  if (const json* parallel = field(object, "parallel_tool_calls")) {
    use.parallel = boolean(*parallel, "parallel_tool_calls");
  }
  return use;
}

void read_prompt(const json& object, CompletionCall& call) {
  const json* prompt = field(object, "prompt");
  if (prompt == nullptr) throw bad_parameter("prompt", "'prompt' is required");
  if (prompt->is_string()) {
    call.prompt = prompt->get<std::string>();
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    call.prompt = (*prompt)[0].get<std::string>();
  } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
    call.prompt_tokens = token_list(*prompt, "prompt");
  } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_array()) {
    call.prompt_tokens = token_list((*prompt)[0], "prompt");
  } else {
    throw bad_parameter("prompt",
                        "'prompt' must be a string, a list of one string, or token ids "
                        "(baton answers one prompt per request)");
  }
  if (call.prompt && call.prompt->empty()) {
    throw bad_parameter("prompt", "'prompt' must not be empty");
  }
}

// The field `limit` names, when present, within its range (sampling_limits.h).
std::optional<double> limited(const json& object, const SamplingLimit& limit) {
  const std::string name(limit.name);
  const json* v = field(object, name.c_str());
  if (v == nullptr) return std::nullopt;
  const double x = number(*v, name, limit.low, limit.high);
  if (limit.above_low && x <= limit.low) {
    throw bad_parameter(name, "'" + name + "' must be greater than " + json(limit.low).dump());
  }
  return x;
}

void read_sampling(const json& object, CompletionCall& call) {
  SamplingRequest& s = call.sampling;
  s.temperature = limited(object, kTemperatureLimit);
  s.top_p = limited(object, kTopPLimit);
  if (const json* v = field(object, "top_k")) {
    const std::int64_t k = integer(*v, "top_k", -1, std::numeric_limits<int>::max());
    s.top_k = k < 0 ? 0 : static_cast<int>(k);  // vLLM: -1 means no limit
  }
  s.min_p = limited(object, kMinPLimit);
  s.repetition_penalty = limited(object, kRepetitionPenaltyLimit);
  s.presence_penalty = limited(object, kPresencePenaltyLimit);
  s.frequency_penalty = limited(object, kFrequencyPenaltyLimit);
  if (const json* v = field(object, "logit_bias")) s.logit_bias = parse_logit_bias(*v);
  if (const json* v = field(object, "seed")) {
    s.seed =
        static_cast<std::uint64_t>(integer(*v, "seed", std::numeric_limits<std::int64_t>::min(),
                                           std::numeric_limits<std::int64_t>::max()));
  }
}

void read_logprobs(const json& object, CompletionCall& call) {
  const json* logprobs = field(object, "logprobs");
  if (call.kind == CompletionCall::Kind::chat) {
    if (logprobs != nullptr) call.logprobs = boolean(*logprobs, "logprobs");
    if (const json* top = field(object, "top_logprobs")) {
      call.top_logprobs = static_cast<int>(integer(*top, "top_logprobs", 0, 20));
      if (!call.logprobs) {
        throw bad_parameter("top_logprobs", "'top_logprobs' needs 'logprobs' set to true");
      }
    }
  } else if (logprobs != nullptr) {
    call.top_logprobs = static_cast<int>(integer(*logprobs, "logprobs", 0, 20));
    call.logprobs = true;
  }
}

void read_stream(const json& object, CompletionCall& call) {
  if (const json* v = field(object, "stream")) call.stream = boolean(*v, "stream");
  read_stream_options(object, call.stream, [&call](const std::string& key, const json& value) {
    if (key == "include_usage") {
      if (!value.is_null()) call.include_usage = boolean(value, "stream_options.include_usage");
      return true;
    }
    return key == "include_obfuscation";
  });
}

void read_max_tokens(const json& object, CompletionCall& call) {
  for (const char* name : {"max_tokens", "max_completion_tokens"}) {
    if (const json* v = field(object, name)) {
      call.max_tokens = static_cast<int>(integer(*v, name, 1, 1 << 24));
    }
  }
}

void check_n(const json& object) {
  if (const json* n = field(object, "n")) {
    if (integer(*n, "n", 1, 128) != 1) {
      throw bad_parameter("n", "'n' greater than 1 is not supported by baton",
                          "unsupported_parameter");
    }
  }
}

// vLLM's add_generation_prompt (default true) and continue_final_message (default false),
// which continues a final assistant message and so needs the other false.
ChatEnd chat_end(const json& object, const std::vector<ChatMessage>& messages) {
  const json* add = field(object, "add_generation_prompt");
  const json* keep = field(object, "continue_final_message");
  const bool open = add == nullptr || boolean(*add, "add_generation_prompt");
  if (keep == nullptr || !boolean(*keep, "continue_final_message")) {
    return open ? ChatEnd::open_reply : ChatEnd::as_is;
  }
  if (open) {
    throw bad_parameter("continue_final_message",
                        "'continue_final_message' needs 'add_generation_prompt': false");
  }
  if (messages.empty() || messages.back().role != "assistant") {
    throw bad_parameter("continue_final_message",
                        "'continue_final_message' needs a final assistant message");
  }
  return ChatEnd::continue_last;
}

const std::set<std::string> kCommonFields = {"model",
                                             "max_tokens",
                                             "temperature",
                                             "top_p",
                                             "seed",
                                             "stop",
                                             "presence_penalty",
                                             "frequency_penalty",
                                             "logprobs",
                                             "stream",
                                             "stream_options",
                                             "n",
                                             "user",
                                             "top_k",
                                             "min_p",
                                             "repetition_penalty",
                                             "ignore_eos",
                                             "logit_bias"};

}  // namespace

CompletionCall parse_completion_call(std::string_view body, CompletionCall::Kind kind) {
  const json object = parse_object(body);
  std::set<std::string> known = kCommonFields;
  std::set<std::string> unsupported;
  if (kind == CompletionCall::Kind::chat) {
    known.insert({"messages", "max_completion_tokens", "top_logprobs", "response_format", "store",
                  "metadata", "parallel_tool_calls", "service_tier", "add_generation_prompt",
                  "continue_final_message", "tools", "tool_choice"});
    unsupported = {"functions",  "function_call",      "audio",           "modalities",
                   "prediction", "web_search_options", "reasoning_effort"};
  } else {
    known.insert({"prompt", "echo"});
    unsupported = {"suffix", "best_of"};
  }
  check_fields(object, known, unsupported);
  if (const json* echo = field(object, "echo"); echo != nullptr && boolean(*echo, "echo")) {
    throw bad_parameter("echo", "'echo' is not supported by baton", "unsupported_parameter");
  }
  CompletionCall call;
  call.kind = kind;
  call.model = model_name(object);
  if (kind == CompletionCall::Kind::chat) {
    call.messages = chat_messages(object);
    call.chat_end = chat_end(object, call.messages);
    call.tool_use = read_tool_use(object, body);
    if (field(object, "response_format") != nullptr) {
      call.response_format = read_response_format(ordered_field(body, "response_format"));
    }
  } else {
    read_prompt(object, call);
  }
  check_n(object);
  read_max_tokens(object, call);
  read_sampling(object, call);
  if (const json* stop = field(object, "stop")) call.stop = stop_strings(*stop);
  read_logprobs(object, call);
  read_stream(object, call);
  if (const json* v = field(object, "ignore_eos")) call.ignore_eos = boolean(*v, "ignore_eos");
  return call;
}

EmbeddingCall parse_embedding_call(std::string_view body) {
  const json object = parse_object(body);
  check_fields(object, {"model", "input", "encoding_format", "user", "dimensions"}, {});
  EmbeddingCall call;
  call.model = model_name(object);
  if (const json* dims = field(object, "dimensions")) {
    (void)integer(*dims, "dimensions", 1, 1 << 20);
    throw bad_parameter("dimensions",
                        "'dimensions' is not supported: baton returns the model's "
                        "own dimensions",
                        "unsupported_parameter");
  }
  if (const json* format = field(object, "encoding_format")) {
    const std::string f = string(*format, "encoding_format");
    if (f != "float" && f != "base64") {
      throw bad_parameter("encoding_format", "'encoding_format' must be 'float' or 'base64'");
    }
    call.base64 = f == "base64";
  }
  const json* input = field(object, "input");
  if (input == nullptr) throw bad_parameter("input", "'input' is required");
  if (input->is_string()) {
    call.texts.push_back(input->get<std::string>());
  } else if (input->is_array() && !input->empty() && (*input)[0].is_string()) {
    for (const json& text : *input) call.texts.push_back(string(text, "input"));
  } else if (input->is_array() && !input->empty() && (*input)[0].is_number()) {
    call.token_inputs.push_back(token_list(*input, "input"));
  } else if (input->is_array() && !input->empty() && (*input)[0].is_array()) {
    for (const json& tokens : *input) {
      if (!tokens.is_array()) throw bad_parameter("input", "'input' mixes token lists and others");
      call.token_inputs.push_back(token_list(tokens, "input"));
    }
  } else {
    throw bad_parameter("input",
                        "'input' must be a string, a non-empty list of strings, or "
                        "token ids");
  }
  if (call.texts.size() + call.token_inputs.size() > 2048) {
    throw bad_parameter("input", "'input' holds at most 2048 inputs");
  }
  for (const std::string& text : call.texts) {
    if (text.empty()) throw bad_parameter("input", "an 'input' string must not be empty");
  }
  return call;
}

}  // namespace baton
