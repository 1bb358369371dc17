#include "baton/server/api/openai_response.h"

#include <array>
#include <chrono>
#include <cstring>

namespace baton {
namespace {

bool is_chat(const ResponseIdentity& identity) {
  return identity.kind == CompletionCall::Kind::chat;
}

ResponseJson base_object(const ResponseIdentity& identity, const char* chat_object) {
  return {{"id", identity.id},
          {"object", is_chat(identity) ? chat_object : "text_completion"},
          {"created", identity.created},
          {"model", identity.model},
          {"system_fingerprint", nullptr}};
}

ResponseJson token_bytes(const std::string& text) {
  ResponseJson bytes = ResponseJson::array();
  for (const unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

// One generated token's text: it continues the text before it, so it keeps its space.
std::string token_text(const BpeTokenizer& tokenizer, TokenId token) {
  return tokenizer.decode({token}, false, BpeTokenizer::Decoding::continuation);
}

// `text` as a response prints it: each invalid UTF-8 sequence replaced by U+FFFD.
std::string as_printed(const std::string& text) {
  return nlohmann::json::parse(dump(nlohmann::json(text))).get<std::string>();
}

// Chat: {"content": [{token, logprob, bytes, top_logprobs}]}.
ResponseJson chat_logprobs(const std::vector<TokenLogprobs>& tokens,
                           const BpeTokenizer& tokenizer) {
  ResponseJson content = ResponseJson::array();
  for (const TokenLogprobs& t : tokens) {
    const std::string text = token_text(tokenizer, t.token);
    ResponseJson top = ResponseJson::array();
    for (const TopLogprob& alt : t.top) {
      const std::string alt_text = token_text(tokenizer, alt.token);
      top.push_back(
          {{"token", alt_text}, {"logprob", alt.logprob}, {"bytes", token_bytes(alt_text)}});
    }
    content.push_back({{"token", text},
                       {"logprob", t.logprob},
                       {"bytes", token_bytes(text)},
                       {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

// Completions: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}.
ResponseJson text_logprobs(const std::vector<TokenLogprobs>& tokens, const BpeTokenizer& tokenizer,
                           std::size_t offset) {
  ResponseJson out = {{"tokens", ResponseJson::array()},
                      {"token_logprobs", ResponseJson::array()},
                      {"top_logprobs", ResponseJson::array()},
                      {"text_offset", ResponseJson::array()}};
  for (const TokenLogprobs& t : tokens) {
    const std::string text = token_text(tokenizer, t.token);
    out["tokens"].push_back(text);
    out["token_logprobs"].push_back(t.logprob);
    ResponseJson top = ResponseJson::object();
    // Lone bytes of UTF-8 sequences all print as U+FFFD: keyed as printed, the likelier (first)
    // keeps its value rather than two equal keys in the response.
    for (const TopLogprob& alt : t.top)
      top.emplace(as_printed(token_text(tokenizer, alt.token)), alt.logprob);
    out["top_logprobs"].push_back(std::move(top));
    out["text_offset"].push_back(offset);
    offset += text.size();
  }
  return out;
}

ResponseJson logprobs_json(const ResponseIdentity& identity,
                           const std::vector<TokenLogprobs>* logprobs,
                           const BpeTokenizer& tokenizer) {
  if (logprobs == nullptr) return nullptr;
  return is_chat(identity) ? chat_logprobs(*logprobs, tokenizer)
                           : text_logprobs(*logprobs, tokenizer, 0);
}

}  // namespace

ResponseIdentity new_identity(CompletionCall::Kind kind, const std::string& model,
                              std::string_view unique) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return {.kind = kind,
          .id = std::string(kind == CompletionCall::Kind::chat ? "chatcmpl-" : "cmpl-") +
                std::string(unique),
          .created = std::chrono::duration_cast<std::chrono::seconds>(now).count(),
          .model = model};
}

ResponseJson usage_json(int prompt_tokens, int completion_tokens, int cached_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

ResponseJson completion_json(const ResponseIdentity& identity, const GenerationResult& result,
                             const std::vector<TokenLogprobs>* logprobs,
                             const BpeTokenizer& tokenizer, const SplitOutput* split) {
  const bool calls = split != nullptr && !split->calls.empty();
  ResponseJson choice = {
      {"index", 0},
      {"finish_reason", calls ? std::string("tool_calls") : std::string(to_string(result.finish))},
      {"logprobs", logprobs_json(identity, logprobs, tokenizer)}};
  if (is_chat(identity) && split != nullptr) {
    ResponseJson message = {
        {"role", "assistant"},
        {"content",
         calls && split->content.empty() ? ResponseJson(nullptr) : ResponseJson(split->content)},
        {"refusal", nullptr}};
    if (calls) {
      ResponseJson list = ResponseJson::array();
      for (const OutputToolCall& call : split->calls) {
        list.push_back({{"id", call.id},
                        {"type", "function"},
                        {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
      }
      message["tool_calls"] = std::move(list);
    }
    choice["message"] = std::move(message);
  } else if (is_chat(identity)) {
    choice["message"] = {{"role", "assistant"}, {"content", result.text}, {"refusal", nullptr}};
  } else {
    choice["text"] = result.text;
  }
  ResponseJson out = base_object(identity, "chat.completion");
  out["choices"] = ResponseJson::array({std::move(choice)});
  out["usage"] = usage_json(result.prompt_tokens, static_cast<int>(result.tokens.size()),
                            result.cached_prompt_tokens);
  return out;
}

ResponseJson chunk_json(const ResponseIdentity& identity, const std::string& text, bool first,
                        std::optional<FinishReason> finish,
                        const std::vector<TokenLogprobs>* logprobs, const BpeTokenizer& tokenizer) {
  ResponseJson choice = {
      {"index", 0},
      {"finish_reason", finish ? ResponseJson(to_string(*finish)) : ResponseJson(nullptr)},
      {"logprobs", logprobs_json(identity, logprobs, tokenizer)}};
  if (is_chat(identity)) {
    ResponseJson delta = {{"content", text}};
    if (first) delta["role"] = "assistant";
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = text;
  }
  ResponseJson out = base_object(identity, "chat.completion.chunk");
  out["choices"] = ResponseJson::array({std::move(choice)});
  return out;
}

ResponseJson tool_call_chunk_json(const ResponseIdentity& identity, int index,
                                  const std::string& id, const std::string& name,
                                  const std::string& arguments) {
  ResponseJson call = {{"index", index}};
  if (!id.empty()) {
    call["id"] = id;
    call["type"] = "function";
    call["function"] = {{"name", name}, {"arguments", arguments}};
  } else {
    call["function"] = {{"arguments", arguments}};
  }
  ResponseJson choice = {{"index", 0},
                         {"delta", {{"tool_calls", ResponseJson::array({std::move(call)})}}},
                         {"logprobs", nullptr},
                         {"finish_reason", nullptr}};
  ResponseJson out = base_object(identity, "chat.completion.chunk");
  out["choices"] = ResponseJson::array({std::move(choice)});
  return out;
}

ResponseJson finish_chunk_json(const ResponseIdentity& identity, const std::string& finish_reason) {
  ResponseJson choice = {{"index", 0},
                         {"delta", ResponseJson::object()},
                         {"logprobs", nullptr},
                         {"finish_reason", finish_reason}};
  ResponseJson out = base_object(identity, "chat.completion.chunk");
  out["choices"] = ResponseJson::array({std::move(choice)});
  return out;
}

ResponseJson usage_chunk_json(const ResponseIdentity& identity, const ResponseJson& usage) {
  ResponseJson out = base_object(identity, "chat.completion.chunk");
  out["choices"] = ResponseJson::array();
  out["usage"] = usage;
  return out;
}

std::string base64_floats(const std::vector<float>& values) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(values.size() * sizeof(float), '\0');
  // float32, little-endian, as the API's base64 encoding is (this host is little-endian).
  std::memcpy(bytes.data(), values.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t word = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) word |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) word |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(word >> 18) & 63];
    out += kAlphabet[(word >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(word >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[word & 63] : '=';
  }
  return out;
}

ResponseJson embeddings_json(const std::string& model,
                             const std::vector<std::vector<float>>& embeddings, bool base64,
                             int prompt_tokens) {
  ResponseJson data = ResponseJson::array();
  for (std::size_t i = 0; i < embeddings.size(); ++i) {
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", base64 ? ResponseJson(base64_floats(embeddings[i]))
                                         : ResponseJson(embeddings[i])}});
  }
  return {{"object", "list"},
          {"data", std::move(data)},
          {"model", model},
          {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dump(const ResponseJson& value) {
  return value.dump(-1, ' ', false, ResponseJson::error_handler_t::replace);
}

}  // namespace baton
