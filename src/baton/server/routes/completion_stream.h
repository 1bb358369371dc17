// CompletionStream: one completion between an LLM engine and a connection, in the wire
// format of the route's API (CompletionFormat: OpenAI's chat or text completions,
// Anthropic's Messages, OpenAI's Responses). The engine's thread hands it each token
// (on_token) and the end (on_done) and never waits: tokens go into a bounded buffer, and a
// client that lets it fill is cut off (its request cancelled), not waited for. The
// connection takes what is ready: SSE events as they come for a streamed request, the whole
// JSON at the end otherwise. An error before the first event is an HTTP error status; after
// it, the format's error event that ends the stream. A client that goes away cancels the
// request (cancel()), which frees its KV blocks within one engine step.
// Thread-safety: as PendingResponse; the engine callbacks take the one mutex.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "baton/engine/llm/llm_engine.h"
#include "baton/server/api/completion_format.h"
#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"
#include "baton/server/http/http_types.h"
#include "baton/server/models/served_model.h"
#include "baton/server/observe/dual_engine_clock.h"
#include "baton/server/observe/metrics.h"

namespace baton {

// What a completion reports to, besides its client.
struct CompletionSinks {
  ServerMetrics& metrics;
  DualEngineClock& busy;
  std::function<void(int status)> counted;  // the HTTP request's status, once known
};

struct CompletionShape {
  bool stream = false;
  bool include_usage = false;  // OpenAI's format (the ResponseIdentity constructor)
  bool logprobs = false;       // likewise
  std::size_t buffer_limit_bytes = std::size_t{1} << 20;  // text not yet sent
};

class CompletionStream final : public PendingResponse,
                               public std::enable_shared_from_this<CompletionStream> {
 public:
  // `model` (a chat model) stays loaded while this object lives. `prompt_param` names the
  // field a context-length error blames.
  CompletionStream(std::shared_ptr<const ServedModel> model, CompletionSinks sinks,
                   std::unique_ptr<CompletionFormat> format, CompletionShape shape,
                   GenerationRequest request, std::string prompt_param);

  void start(std::function<void()> wake) override;
  Chunk take() override;
  void cancel() override;

 private:
  void on_token(const TokenDelta& delta);  // the engine's thread
  void on_done();                          // the engine's thread
  Chunk take_whole();
  Chunk take_streamed(std::vector<TokenDelta> deltas, bool done, bool overflowed);
  std::string end_of_stream();
  Chunk error_response(const ApiError& error);
  const std::string& model_name() const { return model_->spec.name; }

  const std::shared_ptr<const ServedModel> model_;
  LlmEngine& engine_;
  CompletionSinks sinks_;
  const std::unique_ptr<CompletionFormat> format_;  // the session's strand
  const CompletionShape shape_;
  GenerationRequest request_;  // until start() submits it
  const std::string prompt_param_;
  std::stop_source cancel_;
  std::function<void()> wake_;            // set in start(), before the engine can call
  TimePoint submitted_{}, last_token_{};  // the engine's thread, after start()
  int tokens_seen_ = 0;                   // the engine's thread

  std::mutex mu_;
  std::vector<TokenDelta> ready_;  // guarded by mu_: made, not yet taken
  std::size_t ready_bytes_ = 0;    // guarded by mu_
  bool done_ = false;              // guarded by mu_
  bool overflowed_ = false;        // guarded by mu_

  std::future<GenerationResult> future_;  // the session's strand
  // The session's strand: the result of a stream that ended before its first token,
  // taken from future_ to see that it did not fail.
  std::optional<GenerationResult> early_result_;
  bool head_sent_ = false;  // the session's strand
};

}  // namespace baton
