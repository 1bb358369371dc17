#include "baton/server/routes/embedding_response.h"

#include <chrono>

#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"

namespace baton {

EmbeddingResponse::EmbeddingResponse(std::shared_ptr<const ServedModel> model,
                                     EmbeddingRequest request, bool base64,
                                     std::function<void(int)> counted)
    : served_(std::move(model)),
      engine_(*served_->embedding),
      model_(served_->spec.name),
      request_(std::move(request)),
      base64_(base64),
      counted_(std::move(counted)) {}

void EmbeddingResponse::start(std::function<void()> wake) {
  wake_ = std::move(wake);
  request_.on_done = [self = shared_from_this()] { self->done(); };
  future_ = engine_.embed(std::move(request_));
  if (future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) done();
}

void EmbeddingResponse::done() {
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
  }
  wake_();
}

PendingResponse::Chunk EmbeddingResponse::take() {
  {
    std::lock_guard lock(mu_);
    if (!done_) return {};
  }
  HttpResponse response;
  try {
    const EmbeddingResult result = future_.get();
    response = {{200, "application/json", {}},
                dump(embeddings_json(model_, result.embeddings, base64_, result.prompt_tokens))};
  } catch (...) {
    response = to_api_error(std::current_exception(), "input").response();
  }
  counted_(response.head.status);
  return {.head = std::move(response.head),
          .streamed = false,
          .body = std::move(response.body),
          .done = true};
}

}  // namespace baton
