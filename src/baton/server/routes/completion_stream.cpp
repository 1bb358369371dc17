#include "baton/server/routes/completion_stream.h"

#include <chrono>

#include "baton/server/http/api_error.h"

namespace baton {

CompletionStream::CompletionStream(std::shared_ptr<const ServedModel> model, CompletionSinks sinks,
                                   std::unique_ptr<CompletionFormat> format, CompletionShape shape,
                                   GenerationRequest request, std::string prompt_param)
    : model_(std::move(model)),
      engine_(*model_->llm),
      sinks_(std::move(sinks)),
      format_(std::move(format)),
      shape_(shape),
      request_(std::move(request)),
      prompt_param_(std::move(prompt_param)) {}

void CompletionStream::start(std::function<void()> wake) {
  wake_ = std::move(wake);
  // The engine holds this object through the callbacks until the request ends.
  auto self = shared_from_this();
  request_.cancel = cancel_.get_token();
  request_.on_token = [self](const TokenDelta& delta) { self->on_token(delta); };
  request_.on_done = [self] { self->on_done(); };
  sinks_.metrics.prompt_tokens(model_name(), static_cast<int>(request_.prompt.size()));
  sinks_.busy.begin(engine_.name());
  submitted_ = last_token_ = Clock::now();
  future_ = engine_.submit(std::move(request_));
  // Refused at once (a bad request, a full queue, a stopping engine): no callback comes.
  if (future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    {
      std::lock_guard lock(mu_);
      if (done_) return;  // the engine finished it already and called on_done
      done_ = true;
    }
    sinks_.busy.end(engine_.name());
    wake_();
  }
}

void CompletionStream::on_token(const TokenDelta& delta) {
  const TimePoint now = Clock::now();
  if (tokens_seen_++ == 0) {
    sinks_.metrics.first_token(model_name(), seconds_between(submitted_, now));
  } else {
    sinks_.metrics.inter_token(model_name(), seconds_between(last_token_, now));
  }
  last_token_ = now;
  bool overflowed = false;
  {
    std::lock_guard lock(mu_);
    if (overflowed_) return;
    // An unstreamed response needs no deltas: its result carries everything.
    if (!shape_.stream) return;
    ready_bytes_ += delta.text.size() + 64;
    if (ready_bytes_ > shape_.buffer_limit_bytes) {
      overflowed_ = overflowed = true;
    } else {
      ready_.push_back(delta);
    }
  }
  if (overflowed) cancel_.request_stop();  // the client does not keep up: cut it off
  wake_();
}

void CompletionStream::on_done() {
  bool overflowed = false;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    overflowed = overflowed_;
  }
  sinks_.busy.end(engine_.name());
  if (cancel_.stop_requested() && !overflowed) {
    // The client went away: nobody takes the response; count it here (nginx's 499).
    sinks_.counted(499);
    sinks_.metrics.finished(model_name(), "cancelled", tokens_seen_,
                            seconds_between(submitted_, Clock::now()));
  }
  wake_();
}

void CompletionStream::cancel() { cancel_.request_stop(); }

PendingResponse::Chunk CompletionStream::take() {
  std::vector<TokenDelta> deltas;
  bool done = false;
  bool overflowed = false;
  {
    std::lock_guard lock(mu_);
    deltas.swap(ready_);
    ready_bytes_ = 0;
    done = done_;
    overflowed = overflowed_;
  }
  if (!shape_.stream) return done ? take_whole() : Chunk{};
  return take_streamed(std::move(deltas), done, overflowed);
}

PendingResponse::Chunk CompletionStream::error_response(const ApiError& error) {
  sinks_.counted(error.status());
  sinks_.metrics.finished(model_name(), "error", 0, seconds_between(submitted_, Clock::now()));
  HttpResponse response = format_->error_response(error);
  return {.head = std::move(response.head),
          .streamed = false,
          .body = std::move(response.body),
          .done = true};
}

PendingResponse::Chunk CompletionStream::take_whole() {
  GenerationResult result;
  try {
    result = future_.get();
  } catch (...) {
    return error_response(to_api_error(std::current_exception(), prompt_param_));
  }
  std::string body = format_->whole(result);
  sinks_.counted(200);
  sinks_.metrics.finished(model_name(), to_string(result.finish),
                          static_cast<int>(result.tokens.size()),
                          seconds_between(submitted_, Clock::now()));
  return {.head = HttpHead{.status = 200, .content_type = "application/json", .headers = {}},
          .streamed = false,
          .body = std::move(body),
          .done = true};
}

PendingResponse::Chunk CompletionStream::take_streamed(std::vector<TokenDelta> deltas, bool done,
                                                       bool overflowed) {
  Chunk chunk;
  if (!head_sent_) {
    if (deltas.empty() && !done) return chunk;
    if (deltas.empty() && done) {
      // Failed before its first token: the client gets a plain HTTP error.
      try {
        early_result_ = future_.get();
      } catch (...) {
        return error_response(to_api_error(std::current_exception(), prompt_param_));
      }
      // A request that made no token at all still gets a proper stream below.
    }
    head_sent_ = true;
    chunk.head = HttpHead{.status = 200,
                          .content_type = "text/event-stream",
                          .headers = {{"Cache-Control", "no-cache"}}};
    chunk.streamed = true;
    chunk.body += format_->stream_open();
  }
  for (const TokenDelta& delta : deltas) chunk.body += format_->stream_token(delta);
  if (overflowed) {
    chunk.body += format_->stream_error(
        ApiError(500, "the client did not read the stream fast enough; the request was cancelled",
                 "server_error", "client_too_slow"));
    chunk.done = true;
    sinks_.counted(200);
    return chunk;
  }
  if (done) {
    chunk.body += end_of_stream();
    chunk.done = true;
  }
  return chunk;
}

// After the last token: the format's closing events, or the error that ended the stream.
std::string CompletionStream::end_of_stream() {
  sinks_.counted(200);
  const double e2e_s = seconds_between(submitted_, Clock::now());
  GenerationResult result;
  if (early_result_) {
    result = std::move(*early_result_);
  } else {
    try {
      result = future_.get();
    } catch (...) {
      const ApiError error = to_api_error(std::current_exception(), prompt_param_);
      sinks_.metrics.finished(model_name(), "error", tokens_seen_, e2e_s);
      return format_->stream_error(error);
    }
  }
  sinks_.metrics.finished(model_name(), to_string(result.finish),
                          static_cast<int>(result.tokens.size()), e2e_s);
  return format_->stream_close(result);
}

}  // namespace baton
