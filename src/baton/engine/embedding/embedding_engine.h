// EmbeddingEngine: an embedding model (a llama, qwen2 or qwen3 decoder, pooled as its
// sentence-transformers export says or by the default: model/pooling.h), served as the
// studied design serves embeddings: on the ONE shared embedding executor thread and the
// device's default stream, so the embedding engines of a host take turns on one thread.
// One call is one burst (kind embed): its inputs go through the model together, one layer
// per op with a yield point between layers, then each input's hidden states are pooled.
//
// Thread-safety: embed(), stop() and stats() are thread-safe. The model, the executor,
// the stream and the turn outlive the engine; it must be stopped (or destroyed) first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "baton/engine/gpu_burst.h"
#include "baton/engine/hosted_engine.h"
#include "baton/engine/model_runner_factory.h"
#include "baton/engine/worker.h"
#include "baton/model/llama_model.h"
#include "baton/model/output/pooling.h"
#include "baton/model/runner/kv_block_pool.h"

namespace baton {

struct EmbeddingRequest {
  std::uint64_t id = 0;
  std::vector<std::vector<TokenId>> inputs;  // each one a tokenized text
  // Called on the executor once the future is ready, if the call got that far (a call
  // refused by embed() itself has its future ready on return); must be quick.
  std::function<void()> on_done;
};

struct EmbeddingResult {
  std::uint64_t id = 0;
  std::vector<std::vector<float>> embeddings;  // one per input, in order
  int prompt_tokens = 0;
  double queued_ms = 0.0;    // submit -> the executor started it
  double run_ms = 0.0;       // the burst, turn wait included
  std::thread::id executor;  // the thread that ran it (the shared executor)
};

struct EmbeddingEngineStats {
  std::uint64_t requests_done = 0;
  std::uint64_t requests_failed = 0;
  std::uint64_t inputs = 0;
  std::uint64_t tokens = 0;
};

class EmbeddingEngine final : public HostedEngine {
 public:
  // `kv_budget_bytes` bounds the tokens of one call (its keys and values, `kv_value_bytes`
  // each: as LlmBatchOptions); `make_runner`: where the model runs, as the host picks it
  // (host/make_runner.h). `client`, when given, is the turn client registered for this engine
  // on the default stream (a host's seat); else the engine registers one.
  EmbeddingEngine(std::string name, const LlamaModel& model, Pooling pooling, Worker& executor,
                  Stream& default_stream, GpuTurn& turn, const ModelRunnerFactory& make_runner,
                  std::size_t kv_budget_bytes = std::size_t{64} << 20,
                  std::size_t kv_value_bytes = sizeof(float),
                  std::optional<TurnClientId> client = std::nullopt);
  ~EmbeddingEngine() override;
  EmbeddingEngine(const EmbeddingEngine&) = delete;
  EmbeddingEngine& operator=(const EmbeddingEngine&) = delete;

  const std::string& name() const override { return name_; }
  Stream& stream() override { return stream_; }
  TurnClientId turn_client() const override { return client_; }
  EngineActivity activity() const override;
  void add_burst_observer(BurstObserver& observer) override { observers_.push_back(&observer); }
  void stop() override;

  const Pooling& pooling() const { return pooling_; }
  int dimensions() const { return static_cast<int>(model_.config().hidden_size); }
  // Queues the call. The future holds the embeddings, or std::invalid_argument for inputs
  // that can never run (empty, a token outside the vocabulary, too long for the budget),
  // EngineStopped, or the GpuError that failed it.
  std::future<EmbeddingResult> embed(EmbeddingRequest request);
  EmbeddingEngineStats stats() const;

 private:
  class Call;
  EmbeddingResult run(const EmbeddingRequest& request);
  void check(const EmbeddingRequest& request) const;
  std::vector<float> run_model(std::vector<SequenceStep> steps, int tokens, std::uint64_t id);
  void count(bool ok, const EmbeddingRequest& request);
  void call_finished();

  const std::string name_;
  const LlamaModel& model_;
  const Pooling pooling_;
  Worker& executor_;
  Stream& stream_;
  GpuTurn& turn_;
  TurnClientId client_;
  KvBlockPool pool_;                       // the executor thread only
  std::unique_ptr<ModelRunner> runner_;    // the blocks' keys and values; the executor only
  std::vector<BurstObserver*> observers_;  // set-up only
  std::atomic<EngineState> state_{EngineState::idle};
  const BurstContext burst_context_{
      .engine = name_, .turn = turn_, .client = client_, .state = state_, .observers = observers_};
  std::atomic<bool> stopped_{false};

  mutable std::mutex mu_;
  std::condition_variable calls_cv_;
  std::uint32_t pending_calls_ = 0;  // guarded by mu_
  EmbeddingEngineStats stats_;       // guarded by mu_
};

}  // namespace baton
