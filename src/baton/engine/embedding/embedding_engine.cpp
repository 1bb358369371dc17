#include "baton/engine/embedding/embedding_engine.h"

#include <stdexcept>
#include <string>

#include "baton/common/clock.h"
#include "baton/engine/request.h"

namespace baton {
namespace {

constexpr int kBlockTokens = 16;

int blocks_for(std::size_t tokens) {
  return static_cast<int>((tokens + kBlockTokens - 1) / kBlockTokens);
}

// Gives a call's KV blocks back when the call ends, however it ends.
class HeldSequences {
 public:
  HeldSequences(KvBlockPool& pool, std::size_t count) : pool_(pool), sequences_(count) {}
  ~HeldSequences() {
    for (KvSequence& s : sequences_) pool_.release_all(s);
  }
  HeldSequences(const HeldSequences&) = delete;
  HeldSequences& operator=(const HeldSequences&) = delete;
  KvSequence& operator[](std::size_t i) { return sequences_[i]; }

 private:
  KvBlockPool& pool_;
  std::vector<KvSequence> sequences_;
};

}  // namespace

class EmbeddingEngine::Call final : public Job {
 public:
  Call(EmbeddingEngine& engine, EmbeddingRequest request)
      : engine_(engine), request_(std::move(request)), submitted_(Clock::now()) {}
  std::future<EmbeddingResult> future() { return promise_.get_future(); }

  void run(std::stop_token stop) noexcept override {
    std::exception_ptr error;
    try {
      // A shared executor outlives this engine's stop(), so the engine's own flag counts.
      if (stop.stop_requested() || engine_.stopped_.load(std::memory_order_acquire)) {
        throw EngineStopped(engine_.name());
      }
      const TimePoint started = Clock::now();
      EmbeddingResult result = engine_.run(request_);
      result.queued_ms = millis_between(submitted_, started);
      result.run_ms = millis_between(started, Clock::now());
      engine_.count(true, request_);
      promise_.set_value(std::move(result));
    } catch (...) {
      error = std::current_exception();
    }
    // Outside the handler: the promise takes this thread's one reference to the error.
    if (error) {
      engine_.count(false, request_);
      promise_.set_exception(std::move(error));
    }
    notify();
    engine_.call_finished();
  }
  void cancel() noexcept override {
    engine_.count(false, request_);
    promise_.set_exception(std::make_exception_ptr(EngineStopped(engine_.name())));
    notify();
    engine_.call_finished();
  }

 private:
  void notify() noexcept {
    try {
      if (request_.on_done) request_.on_done();
    } catch (...) {
      // The result is in the future already; a failing notification cannot change it.
    }
  }

  EmbeddingEngine& engine_;
  EmbeddingRequest request_;
  TimePoint submitted_;
  std::promise<EmbeddingResult> promise_;
};

EmbeddingEngine::EmbeddingEngine(std::string name, const LlamaModel& model, Pooling pooling,
                                 Worker& executor, Stream& default_stream, GpuTurn& turn,
                                 const ModelRunnerFactory& make_runner, std::size_t kv_budget_bytes,
                                 std::size_t kv_value_bytes, std::optional<TurnClientId> client)
    : name_(std::move(name)),
      model_(model),
      pooling_(pooling),
      executor_(executor),
      stream_(default_stream),
      turn_(turn),
      client_(client ? *client : turn.register_client(name_, default_stream)),
      pool_(model.config(), kBlockTokens, kv_budget_bytes, kv_value_bytes),
      runner_(make_runner(model, pool_, default_stream)) {}

EmbeddingEngine::~EmbeddingEngine() {
  stop();
  // Calls on the shared executor still point at this engine; they fail fast once stopped.
  std::unique_lock lock(mu_);
  calls_cv_.wait(lock, [this] { return pending_calls_ == 0; });
}

void EmbeddingEngine::stop() { stopped_.store(true, std::memory_order_release); }

EngineActivity EmbeddingEngine::activity() const {
  return EngineActivity{.engine = name_,
                        .stream = stream_.name(),
                        .kind = BurstKind::embed,
                        .state = state_.load(std::memory_order_relaxed)};
}

std::future<EmbeddingResult> EmbeddingEngine::embed(EmbeddingRequest request) {
  auto call = std::make_unique<Call>(*this, std::move(request));
  std::future<EmbeddingResult> future = call->future();
  {
    std::lock_guard lock(mu_);
    ++pending_calls_;
  }
  if (stopped_.load(std::memory_order_acquire)) {
    call->cancel();
  } else {
    executor_.post(std::move(call));
  }
  return future;
}

EmbeddingEngineStats EmbeddingEngine::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void EmbeddingEngine::count(bool ok, const EmbeddingRequest& request) {
  std::lock_guard lock(mu_);
  if (!ok) {
    ++stats_.requests_failed;
    return;
  }
  ++stats_.requests_done;
  stats_.inputs += request.inputs.size();
  for (const auto& input : request.inputs) stats_.tokens += input.size();
}

void EmbeddingEngine::call_finished() {
  // Notified under the lock: the destructor may free the engine as soon as it sees 0.
  std::lock_guard lock(mu_);
  --pending_calls_;
  calls_cv_.notify_all();
}

void EmbeddingEngine::check(const EmbeddingRequest& request) const {
  const std::string what = "[embedding engine " + name_ + "] ";
  if (request.inputs.empty()) throw std::invalid_argument(what + "no input to embed");
  const auto vocab = static_cast<std::size_t>(model_.config().vocab_size);
  const auto context = static_cast<std::size_t>(model_.config().max_position_embeddings);
  int blocks = 0;
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    const std::vector<TokenId>& input = request.inputs[i];
    const std::string which = "input " + std::to_string(i);
    if (input.empty()) throw std::invalid_argument(what + which + " is empty");
    if (input.size() > context) {
      throw std::invalid_argument(what + which + " has " + std::to_string(input.size()) +
                                  " tokens; the model's context is " + std::to_string(context));
    }
    for (std::size_t position = 0; position < input.size(); ++position) {
      if (!in_vocabulary(input[position], vocab)) {
        throw TokenOutsideVocabulary(TokenOutsideVocabulary::Field::prompt, position,
                                     input[position], vocab, name_);
      }
    }
    blocks += blocks_for(input.size());
  }
  if (blocks > pool_.total_blocks()) {
    throw std::invalid_argument(what + "the inputs need " + std::to_string(blocks) +
                                " KV blocks of " + std::to_string(kBlockTokens) +
                                " tokens; the engine's budget holds " +
                                std::to_string(pool_.total_blocks()) + " (send fewer at once)");
  }
}

EmbeddingResult EmbeddingEngine::run(const EmbeddingRequest& request) {
  check(request);
  HeldSequences sequences(pool_, request.inputs.size());
  std::vector<SequenceStep> steps;
  int tokens = 0;
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    for (int b = 0; b < blocks_for(request.inputs[i].size()); ++b) {
      sequences[i].blocks.push_back(*pool_.allocate());  // check() counted them
    }
    steps.push_back({request.inputs[i], &sequences[i]});
    tokens += static_cast<int>(request.inputs[i].size());
  }
  const std::vector<float> hidden = run_model(std::move(steps), tokens, request.id);
  const int width = dimensions();
  EmbeddingResult result;
  result.id = request.id;
  result.prompt_tokens = tokens;
  result.executor = std::this_thread::get_id();
  std::size_t row = 0;
  for (const std::vector<TokenId>& input : request.inputs) {
    const auto count = static_cast<int>(input.size());
    const std::span<const float> rows(hidden.data() + row * width,
                                      static_cast<std::size_t>(count) * width);
    result.embeddings.push_back(pool(pooling_, rows, count, width));
    row += input.size();
  }
  return result;
}

std::vector<float> EmbeddingEngine::run_model(std::vector<SequenceStep> steps, int tokens,
                                              std::uint64_t id) {
  GpuBurst burst(burst_context_, BurstKind::embed, id, static_cast<std::size_t>(tokens));
  std::vector<float> hidden;
  try {
    // The ops share the step: after a reset the stream may still finish them.
    const std::shared_ptr<ModelStep> step = runner_->begin(
        StepPlan{
            .sequences = std::move(steps), .prefills = true, .output = StepOutput::every_hidden},
        burst.device_share());
    for (int i = 0; i < step->layers(); ++i) {
      stream_.encode(Op{.run = [step, i] { step->run_layer(i); }, .bytes = 0});
      stream_.commit();
      if (i + 1 < step->layers()) burst.yield_point(Boundary::layer);
    }
    stream_.encode(Op{.run = [step] { step->finish(); }, .bytes = 0});
    stream_.synchronize();
    hidden = step->take_output().values;
  } catch (...) {
    stream_.wait_idle();  // nothing of the failed call may still touch its KV blocks
    throw;                // the burst reports the failure as it unwinds
  }
  burst.done();
  return hidden;
}

}  // namespace baton
