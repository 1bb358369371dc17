// EmbeddingResponse: one /v1/embeddings call between the shared embedding executor and a
// connection: the executor says when the call is done (on_done), and the connection then
// sends the vectors whole. A call is one burst and cannot be cut short, so cancel() only
// drops the result.
// Thread-safety: as PendingResponse; the executor's callback takes the one mutex.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "baton/engine/embedding/embedding_engine.h"
#include "baton/server/http/http_types.h"
#include "baton/server/models/served_model.h"

namespace baton {

class EmbeddingResponse final : public PendingResponse,
                                public std::enable_shared_from_this<EmbeddingResponse> {
 public:
  // `model` (an embedding model) stays loaded while this object lives.
  EmbeddingResponse(std::shared_ptr<const ServedModel> model, EmbeddingRequest request, bool base64,
                    std::function<void(int status)> counted);

  void start(std::function<void()> wake) override;
  Chunk take() override;
  void cancel() override {}

 private:
  void done();

  const std::shared_ptr<const ServedModel> served_;
  EmbeddingEngine& engine_;
  const std::string model_;
  EmbeddingRequest request_;  // until start() submits it
  const bool base64_;
  std::function<void(int)> counted_;
  std::function<void()> wake_;
  std::mutex mu_;
  bool done_ = false;                    // guarded by mu_
  std::future<EmbeddingResult> future_;  // the session's strand
};

}  // namespace baton
