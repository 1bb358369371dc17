#include "baton/server/models/after_load.h"

namespace baton {

AfterLoad::AfterLoad(Then then, ErrorResponse error_response, std::function<void(int)> counted)
    : then_(std::move(then)),
      error_response_(std::move(error_response)),
      counted_(std::move(counted)) {}

void AfterLoad::arrived(std::shared_ptr<const ServedModel> model, std::exception_ptr error) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    arrived_ = true;
    model_ = std::move(model);
    error_ = std::move(error);
    wake = wake_;
  }
  if (wake) wake();
}

void AfterLoad::start(std::function<void()> wake) {
  bool arrived = false;
  {
    std::lock_guard lock(mu_);
    wake_ = wake;
    arrived = arrived_;
  }
  if (arrived) wake();
}

PendingResponse::Chunk AfterLoad::whole(const HttpResponse& response) const {
  return Chunk{.head = response.head, .streamed = false, .body = response.body, .done = true};
}

PendingResponse::Chunk AfterLoad::error_chunk(const std::exception_ptr& error) const {
  const ApiError api = to_api_error(error);
  if (counted_) counted_(api.status());
  return whole(error_response_ ? error_response_(api) : api.response());
}

PendingResponse::Chunk AfterLoad::take() {
  if (inner_) return inner_->take();
  std::shared_ptr<const ServedModel> model;
  std::exception_ptr error;
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    if (!arrived_) return {};
    model = std::move(model_);
    error = error_;
    wake = wake_;
  }
  if (error) return error_chunk(error);
  if (cancelled_)
    return Chunk{
        .head = std::nullopt, .streamed = false, .body = {}, .done = true};  // the client is gone
  RouteResult result;
  try {
    result = then_(std::move(model));
  } catch (...) {
    return error_chunk(std::current_exception());
  }
  if (auto* response = std::get_if<HttpResponse>(&result)) return whole(*response);
  inner_ = std::get<std::shared_ptr<PendingResponse>>(std::move(result));
  inner_->start(std::move(wake));
  return inner_->take();
}

void AfterLoad::cancel() {
  cancelled_ = true;
  if (inner_) inner_->cancel();
}

}  // namespace baton
