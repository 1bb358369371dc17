// AfterLoad: the response to a request whose model is still loading (an on-demand load):
// it waits, without holding an I/O thread, until the registry hands it the model (or the
// error that ends the wait), then runs the route's own work and becomes its response.
// Thread-safety: as PendingResponse; arrived() may be called from any thread.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <mutex>

#include "baton/server/http/api_error.h"
#include "baton/server/http/http_types.h"
#include "baton/server/models/served_model.h"

namespace baton {

class AfterLoad final : public PendingResponse {
 public:
  using Then = std::function<RouteResult(std::shared_ptr<const ServedModel> model)>;
  using ErrorResponse = std::function<HttpResponse(const ApiError& error)>;

  // `error_response` shapes an error (the OpenAI shape when empty); `counted` gets the
  // status of an error this response sends itself (the route's work counts the rest).
  AfterLoad(Then then, ErrorResponse error_response, std::function<void(int status)> counted);

  // The route's work on `model`, at once (the model was ready: no wait).
  RouteResult then(std::shared_ptr<const ServedModel> model) const {
    return then_(std::move(model));
  }

  // The model is ready (`model`), or the wait ended (`error`, an ApiError).
  void arrived(std::shared_ptr<const ServedModel> model, std::exception_ptr error);

  void start(std::function<void()> wake) override;
  Chunk take() override;
  void cancel() override;

 private:
  Chunk whole(const HttpResponse& response) const;
  Chunk error_chunk(const std::exception_ptr& error) const;  // counted

  const Then then_;
  const ErrorResponse error_response_;
  const std::function<void(int)> counted_;
  std::mutex mu_;
  std::function<void()> wake_;                // guarded by mu_
  bool arrived_ = false;                      // guarded by mu_
  std::shared_ptr<const ServedModel> model_;  // guarded by mu_
  std::exception_ptr error_;                  // guarded by mu_
  std::shared_ptr<PendingResponse> inner_;    // the session's strand
  bool cancelled_ = false;                    // the session's strand
};

}  // namespace baton
