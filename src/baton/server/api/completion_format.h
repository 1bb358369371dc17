// CompletionFormat: the wire format of one completion, as CompletionStream hands it the
// request's life: the whole body of an unstreamed response; for a streamed one, the events
// that open the stream, one token's text, the end, and an error that ends it after the
// head; and the HTTP error response of a request that failed before it. OpenAiFormat is
// OpenAI's chat and text completions (chat.completion / chat.completion.chunk /
// text_completion, `data: [DONE]`); anthropic_messages.h and responses_api.h hold the
// others. A format keeps what it needs between calls (a sequence number, the text so far),
// so one object serves one response.
// Thread-safety: none; CompletionStream calls it from the session's strand only.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "baton/engine/llm/generation.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/server/api/openai_response.h"
#include "baton/server/api/tool_output.h"
#include "baton/server/http/api_error.h"
#include "baton/server/http/http_types.h"

namespace baton {

class CompletionFormat {
 public:
  virtual ~CompletionFormat() = default;
  // The body (application/json) of an unstreamed response.
  virtual std::string whole(const GenerationResult& result) = 0;
  // A stream's first events, sent with the head (before the first token's text).
  virtual std::string stream_open() = 0;
  // The events for one token (nothing for a token whose text is held back).
  virtual std::string stream_token(const TokenDelta& delta) = 0;
  // The last events of a stream that finished with `result`.
  virtual std::string stream_close(const GenerationResult& result) = 0;
  // The last events of a stream that `error` ended after its head.
  virtual std::string stream_error(const ApiError& error) = 0;
  // A request that failed before its head: the HTTP error, in this API's shape.
  virtual HttpResponse error_response(const ApiError& error) const = 0;
};

// OpenAI's chat completions or completions (identity.kind), with usage at the end of a
// stream when `include_usage`, log-probabilities when `logprobs`, and the text read for
// tool calls when `tool_calls` says in which format the model writes them.
class OpenAiFormat final : public CompletionFormat {
 public:
  OpenAiFormat(ResponseIdentity identity, bool include_usage, bool logprobs,
               const BpeTokenizer& tokenizer,
               std::optional<ToolCallFormat> tool_calls = std::nullopt);

  std::string whole(const GenerationResult& result) override;
  std::string stream_open() override;
  std::string stream_token(const TokenDelta& delta) override;
  std::string stream_close(const GenerationResult& result) override;
  std::string stream_error(const ApiError& error) override;
  HttpResponse error_response(const ApiError& error) const override;

 private:
  const ResponseIdentity identity_;
  const bool include_usage_;
  const bool logprobs_;
  const BpeTokenizer& tokenizer_;
  std::optional<ToolOutput> tools_;
};

}  // namespace baton
