#include "baton/server/api/completion_format.h"

#include "baton/server/http/sse.h"

namespace baton {

OpenAiFormat::OpenAiFormat(ResponseIdentity identity, bool include_usage, bool logprobs,
                           const BpeTokenizer& tokenizer)
    : identity_(std::move(identity)),
      include_usage_(include_usage),
      logprobs_(logprobs),
      tokenizer_(tokenizer) {}

std::string OpenAiFormat::whole(const GenerationResult& result) {
  std::vector<TokenLogprobs> logprobs;
  for (std::size_t i = 0; logprobs_ && i < result.tokens.size(); ++i) {
    logprobs.push_back({.token = result.tokens[i],
                        .logprob = result.logprobs[i],
                        .top = i < result.top_logprobs.size() ? result.top_logprobs[i]
                                                              : std::vector<TopLogprob>{}});
  }
  return dump(completion_json(identity_, result, logprobs_ ? &logprobs : nullptr, tokenizer_));
}

std::string OpenAiFormat::stream_open() {
  // The role comes first, on its own, as OpenAI's streams do.
  if (identity_.kind != CompletionCall::Kind::chat) return {};
  return sse_event(dump(chunk_json(identity_, "", true, std::nullopt, nullptr, tokenizer_)));
}

std::string OpenAiFormat::stream_token(const TokenDelta& delta) {
  // One chunk per token, even one whose text is empty (a control token; a UTF-8 byte held
  // back until its sequence completes): a client that counts chunks gets usage's count.
  const std::vector<TokenLogprobs> logprobs{
      {.token = delta.token, .logprob = delta.logprob, .top = delta.top}};
  return sse_event(dump(chunk_json(identity_, delta.text, false, delta.finish,
                                   logprobs_ ? &logprobs : nullptr, tokenizer_)));
}

std::string OpenAiFormat::stream_close(const GenerationResult& result) {
  std::string out;
  if (include_usage_) {
    out += sse_event(dump(usage_chunk_json(
        identity_, usage_json(result.prompt_tokens, static_cast<int>(result.tokens.size()),
                              result.cached_prompt_tokens))));
  }
  return out + sse_done();
}

std::string OpenAiFormat::stream_error(const ApiError& error) {
  return sse_event(error.body()) + sse_done();
}

HttpResponse OpenAiFormat::error_response(const ApiError& error) const { return error.response(); }

}  // namespace baton
