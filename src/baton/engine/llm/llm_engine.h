// LlmEngine: one LLM with continuous batching (llm_batch.h) on its own thread and
// stream. Each step of the batch is one burst under the GPU turn: the forward pass goes on
// the stream one layer per op, with a yield point between layers, so the turn's per-layer
// quantum, the watchdog (which watches the stream) and the ledger (a burst observer) all
// see real inference. While the turn asks for pieces (serialize/op with other engines
// active), a prefill layer goes on as row pieces of bounded time (piece_sizer.h), each
// followed by a yield point. A step that fails (a hang the watchdog reset, a device error) fails
// the requests it carried with that error; the others go on.
//
// Queue and cancellation: at most `queue_limit` requests wait (submitted, not admitted);
// one more is refused at once with QueueFull. A request whose stop token is requested
// leaves at the engine's next loop turn, before the next step. Checking there suffices:
// the engine only sleeps while nothing is queued or running, so no callback must wake it.
//
// Thread-safety: submit(), stop(), stats() and context_length() are thread-safe. The
// model, tokenizer, turn and observers must outlive the engine.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "baton/engine/gpu_burst.h"
#include "baton/engine/hosted_engine.h"
#include "baton/engine/llm/llm_batch.h"
#include "baton/engine/llm/piece_sizer.h"
#include "baton/engine/model_runner_factory.h"
#include "baton/gpu/stream.h"
#include "baton/turn/gpu_turn.h"

namespace baton {

struct LlmEngineStats {
  std::string name;
  std::uint64_t requests_done = 0;
  std::uint64_t requests_failed = 0;
  std::size_t waiting_for_kv = 0;  // requests waiting for KV blocks right now
  std::size_t queued = 0;          // submitted, not admitted: the inbox and waiting_for_kv
  std::size_t running = 0;
  std::uint64_t requests_cancelled = 0;
  int context_length = 0;  // the engine's context (LlmEngine::context_length())
  int kv_blocks_total = 0;
  int kv_blocks_available = 0;
  int kv_blocks_cached = 0;
  LlmBatchCounters counters;
  std::uint64_t prefill_pieces = 0;   // pieces of prefill layers run (serialize/op, shared)
  double prefill_piece_layers = 0.0;  // the share of a layer each covered, summed (a mean)
  // The longest of them in device time (pieces that completed together: their sum).
  double longest_piece_ms = 0.0;
  double warm_up_ms = 0.0;  // the load's warm-up of the piece shapes (0: none)
};

class LlmEngine final : public HostedEngine {
 public:
  // `make_runner`: where the model runs, as the host picks it (host/make_runner.h).
  // `client`, when given, is the turn client `stream` was registered as (a host's seat,
  // which outlives the engine and shares `stream`); else the engine registers one.
  LlmEngine(std::string name, const LlamaModel& model, const BpeTokenizer* tokenizer,
            LlmBatchOptions options, std::shared_ptr<Stream> stream, GpuTurn& turn,
            const ModelRunnerFactory& make_runner,
            std::optional<TurnClientId> client = std::nullopt);
  ~LlmEngine() override;
  LlmEngine(const LlmEngine&) = delete;
  LlmEngine& operator=(const LlmEngine&) = delete;

  const std::string& name() const override { return name_; }
  Stream& stream() override { return *stream_; }
  TurnClientId turn_client() const override { return client_; }
  EngineActivity activity() const override;
  // Queues `request`; the future holds the result, or the error that failed it
  // (std::invalid_argument for a request that can never run, ContextLengthExceeded
  // among them; QueueFull; RequestCancelled; EngineStopped; GpuError).
  std::future<GenerationResult> submit(GenerationRequest request);
  // Tokens of prompt and completion together a request may use; fixed at construction.
  int context_length() const { return batch_.context_length(); }
  // Fails every queued and running request with EngineStopped and joins the thread.
  void stop() override;
  LlmEngineStats stats() const;
  // What runs the steps (the CPU forward pass, or a device's).
  const ModelRunner& runner() const { return *runner_; }
  void add_burst_observer(BurstObserver& observer) override { observers_.push_back(&observer); }

 private:
  void loop(std::stop_token stop);
  // Each kernel shape of a prefill's pieces launched once before the first request.
  void warm_up();
  void run_step(StepPlan plan);
  void encode_layer(GpuBurst& burst, const std::shared_ptr<ModelStep>& step, int layer,
                    std::size_t context);
  void encode_pieces(GpuBurst& burst, const std::shared_ptr<ModelStep>& step, int layer,
                     std::size_t context, double budget_ms);
  // The most positions any sequence of the plan attends to once it ran.
  static std::size_t attended_positions(const StepPlan& plan);
  void deliver(std::vector<std::unique_ptr<LlmBatch::Entry>> finished);
  void fail(std::vector<std::unique_ptr<LlmBatch::Entry>> entries, std::exception_ptr error);
  void cancel(std::vector<std::unique_ptr<LlmBatch::Entry>> entries);
  // Guarded by mu_: the inbox plus the batch's waiting requests, as last counted.
  std::size_t queued_locked() const { return inbox_.size() + stats_.waiting_for_kv; }
  void update_stats();
  // Calls the request's on_done, after its promise is set.
  static void notify_done(LlmBatch::Entry& entry) noexcept;

  const std::string name_;
  const LlamaModel& model_;
  std::shared_ptr<Stream> stream_;
  GpuTurn& turn_;
  TurnClientId client_;
  std::vector<BurstObserver*> observers_;  // set-up only
  std::atomic<EngineState> state_{EngineState::idle};
  std::atomic<BurstKind> step_kind_{BurstKind::decode};  // of the step in progress
  const BurstContext burst_context_{
      .engine = name_, .turn = turn_, .client = client_, .state = state_, .observers = observers_};

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::vector<std::unique_ptr<LlmBatch::Entry>> inbox_;  // guarded by mu_
  bool stopping_ = false;                                // guarded by mu_
  LlmEngineStats stats_;                                 // guarded by mu_
  const std::size_t queue_limit_;                        // 0: none

  LlmBatch batch_;     // engine thread only, but for validate() and context_length()
  PieceSizer pieces_;  // engine thread only
  std::unique_ptr<ModelRunner> runner_;  // executes batch_'s plans over its KV blocks
  std::jthread thread_;                  // last: starts after the rest
};

}  // namespace baton
