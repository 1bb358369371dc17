#include "baton/server/api/completion_format.h"

#include "baton/server/http/sse.h"

namespace baton {

OpenAiFormat::OpenAiFormat(ResponseIdentity identity, bool include_usage, bool logprobs,
                           const BpeTokenizer& tokenizer, std::optional<ToolCallFormat> tool_calls)
    : identity_(std::move(identity)),
      include_usage_(include_usage),
      logprobs_(logprobs),
      tokenizer_(tokenizer) {
  // Call ids unique in the server's life: the response's id and the call's index.
  if (tool_calls)
    tools_.emplace(*tool_calls, "call_" + identity_.id.substr(identity_.id.find('-') + 1) + "_");
}

std::string OpenAiFormat::whole(const GenerationResult& result) {
  std::vector<TokenLogprobs> logprobs;
  for (std::size_t i = 0; logprobs_ && i < result.tokens.size(); ++i) {
    logprobs.push_back({.token = result.tokens[i],
                        .logprob = result.logprobs[i],
                        .top = i < result.top_logprobs.size() ? result.top_logprobs[i]
                                                              : std::vector<TopLogprob>{}});
  }
  std::optional<SplitOutput> split;
  if (tools_) split = tools_->whole(result.text);
  return dump(completion_json(identity_, result, logprobs_ ? &logprobs : nullptr, tokenizer_,
                              split ? &*split : nullptr));
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
  if (!tools_) {
    return sse_event(dump(chunk_json(identity_, delta.text, false, delta.finish,
                                     logprobs_ ? &logprobs : nullptr, tokenizer_)));
  }
  // With tools the text goes through the parser: content chunks and tool call chunks, then
  // a last chunk that only finishes.
  std::vector<ToolStreamPiece> pieces = tools_->feed(delta.text);
  if (delta.finish) {
    std::vector<ToolStreamPiece> rest = tools_->finish();
    pieces.insert(pieces.end(), std::make_move_iterator(rest.begin()),
                  std::make_move_iterator(rest.end()));
  }
  std::string out;
  bool logprobs_sent = false;
  for (const ToolStreamPiece& piece : pieces) {
    if (piece.call_index >= 0) {
      const bool first = !piece.name.empty();
      out += sse_event(dump(tool_call_chunk_json(identity_, piece.call_index,
                                                 first ? tools_->id(piece.call_index) : "",
                                                 piece.name, piece.arguments)));
    } else {
      out += sse_event(
          dump(chunk_json(identity_, piece.content, false, std::nullopt,
                          logprobs_ && !logprobs_sent ? &logprobs : nullptr, tokenizer_)));
      logprobs_sent = true;
    }
  }
  if (logprobs_ && !logprobs_sent) {  // every token's log-probabilities reach the client
    out += sse_event(dump(chunk_json(identity_, "", false, std::nullopt, &logprobs, tokenizer_)));
  }
  if (delta.finish) {
    out += sse_event(dump(finish_chunk_json(
        identity_, tools_->calls() > 0 ? "tool_calls" : std::string(to_string(*delta.finish)))));
  }
  return out;
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
