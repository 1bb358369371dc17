// libFuzzer target: arbitrary bytes as the body of a chat completion, completion,
// embeddings, Anthropic messages, Responses, tokenize or detokenize request, into the
// parsers the server runs on every request. An ApiError with
// status 400 is the expected answer to a bad body; any other exception, a crash, a hang,
// a sanitizer report, or an accepted request that breaks the parsers' promises (a value
// out of its documented range, an empty model or prompt) is a bug.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "baton/model/chat/chat_tools.h"
#include "baton/server/api/openai_request.h"
#include "baton/server/api/peer_requests.h"
#include "baton/server/http/api_error.h"

namespace {

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "openai_request_fuzz: accepted a request that breaks: %s\n", what);
  std::abort();
}

template <typename T>
bool within(const std::optional<T>& value, double low, double high) {
  return !value || (*value >= low && *value <= high);
}

void check(const baton::CompletionCall& call) {
  require(!call.model.empty(), "a model name");
  if (call.kind == baton::CompletionCall::Kind::chat) {
    require(!call.messages.empty(), "at least one message");
    require(
        call.chat_end != baton::ChatEnd::continue_last || call.messages.back().role == "assistant",
        "only a final assistant message is continued");
  } else {
    require(call.prompt.has_value() != call.prompt_tokens.has_value(), "one prompt");
    require(!call.prompt || !call.prompt->empty(), "a non-empty prompt");
    require(!call.prompt_tokens || !call.prompt_tokens->empty(), "non-empty prompt tokens");
  }
  const baton::SamplingRequest& s = call.sampling;
  require(within(s.temperature, 0, 2), "temperature in [0, 2]");
  require(within(s.top_p, 1e-300, 1), "top_p in (0, 1]");
  require(within(s.presence_penalty, -2, 2) && within(s.frequency_penalty, -2, 2), "penalties");
  require(!call.max_tokens || *call.max_tokens >= 1, "max_tokens >= 1");
  require(call.top_logprobs >= 0 && call.top_logprobs <= 20, "top_logprobs in [0, 20]");
  require(call.stop.size() <= 4, "4 stop strings at most");
  for (const auto& stop : call.stop) require(!stop.empty(), "non-empty stop strings");
  require(!call.include_usage || call.stream, "include_usage only when streaming");
}

void check(const baton::EmbeddingCall& call) {
  require(!call.model.empty(), "a model name");
  require(!call.texts.empty() || !call.token_inputs.empty(), "some input");
  for (const auto& text : call.texts) require(!text.empty(), "non-empty texts");
  // Token ids may be negative here: the route checks them against the model's vocabulary.
  for (const auto& tokens : call.token_inputs) require(!tokens.empty(), "non-empty token inputs");
}

// Tools that reach a template and a grammar: valid, and a choice they can satisfy.
void check_tool_use(const baton::ToolUse& use) {
  try {
    baton::validate_tools(nlohmann::ordered_json(use.tools));
  } catch (const std::invalid_argument&) {
    require(false, "valid tools");
  }
  const bool forced =
      use.choice == baton::ToolUse::Choice::required || use.choice == baton::ToolUse::Choice::named;
  require(!forced || !use.tools.empty(), "a call required only with tools");
  if (use.choice == baton::ToolUse::Choice::named) {
    const auto names = baton::tool_names(use.tools);
    require(std::find(names.begin(), names.end(), use.function) != names.end(),
            "a named function among the tools");
  }
}

void check_peer_chat(const baton::CompletionCall& call, double max_temperature,
                     std::size_t max_stops) {
  require(!call.model.empty(), "a model name");
  require(call.kind == baton::CompletionCall::Kind::chat, "a chat call");
  require(!call.messages.empty(), "at least one message");
  std::set<std::string> called;
  for (const auto& m : call.messages) {
    require(m.role == "system" || m.role == "user" || m.role == "assistant" || m.role == "tool",
            "a known role");
    require(m.tool_calls.empty() || m.role == "assistant", "only the assistant calls tools");
    for (const auto& c : m.tool_calls) called.insert(c.id);
    require(m.role != "tool" || called.contains(m.tool_call_id),
            "a tool result answers an earlier call");
  }
  check_tool_use(call.tool_use);
  require(within(call.sampling.temperature, 0, max_temperature), "temperature in range");
  require(within(call.sampling.top_p, 1e-300, 1), "top_p in (0, 1]");
  require(!call.sampling.top_k || *call.sampling.top_k >= 0, "top_k >= 0");
  require(!call.max_tokens || *call.max_tokens >= 1, "max_tokens >= 1");
  require(call.stop.size() <= max_stops, "a bounded number of stop strings");
  for (const auto& stop : call.stop) require(!stop.empty(), "non-empty stop strings");
}

void check_anthropic(const baton::CompletionCall& call) {
  check_peer_chat(call, 1, baton::kMaxStopSequences);
  require(call.max_tokens.has_value(), "max_tokens is required");
  const auto& last = call.messages.back();
  require((last.role == "assistant" && last.tool_calls.empty()) ==
              (call.chat_end == baton::ChatEnd::continue_last),
          "a final assistant message without calls is continued (a prefill), and only that");
}

void check(const baton::ResponsesCall& call) {
  check_peer_chat(call.call, 2, 0);
  require(call.metadata.size() <= 16, "16 metadata keys at most");
}

void check(const baton::TokenizeCall& call) {
  require(!call.model.empty(), "a model name");
  require(call.tools.empty() || !call.messages.empty(), "tools only with messages");
  require(call.prompt.has_value() != !call.messages.empty(), "a prompt or messages");
}

void check(const baton::DetokenizeCall& call) { require(!call.model.empty(), "a model name"); }

template <typename Parse>
void run(Parse parse) {
  try {
    parse();
  } catch (const baton::ApiError& error) {
    require(error.status() == 400, "a refusal with status 400");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  run([&] { check(baton::parse_completion_call(body, baton::CompletionCall::Kind::chat)); });
  run([&] { check(baton::parse_completion_call(body, baton::CompletionCall::Kind::text)); });
  run([&] { check(baton::parse_embedding_call(body)); });
  run([&] { check_anthropic(baton::parse_anthropic_call(body)); });
  run([&] { check(baton::parse_responses_call(body)); });
  run([&] { check(baton::parse_tokenize_call(body)); });
  run([&] { check(baton::parse_detokenize_call(body)); });
  return 0;
}
