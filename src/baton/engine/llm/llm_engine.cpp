#include "baton/engine/llm/llm_engine.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "baton/common/clock.h"
#include "baton/engine/llm/layer_pieces.h"
#include "baton/engine/llm/piece_clock.h"
#include "baton/engine/request.h"
#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

// `model`, if it can give logits; else a ModelFileError that says what it is for.
const LlamaModel& generating(const LlamaModel& model) {
  if (!model.generates_text()) {
    throw ModelFileError(model.source(),
                         "no lm_head.weight and tie_word_embeddings is false: a base model's "
                         "export, which gives embeddings, not text; serve it as an embedding "
                         "model (kind = \"embedding\", --embedding)");
  }
  return model;
}

}  // namespace

LlmEngine::LlmEngine(std::string name, const LlamaModel& model, const BpeTokenizer* tokenizer,
                     LlmBatchOptions options, std::shared_ptr<Stream> stream, GpuTurn& turn,
                     const ModelRunnerFactory& make_runner, std::optional<TurnClientId> client)
    : name_(std::move(name)),
      model_(generating(model)),
      stream_(std::move(stream)),
      turn_(turn),
      client_(client ? *client : turn.register_client(name_, *stream_)),
      queue_limit_(static_cast<std::size_t>(std::max(options.queue_limit, 0))),
      batch_(model, tokenizer, options),
      runner_(make_runner(model, batch_.pool(), *stream_)),
      thread_([this](std::stop_token stop) { loop(stop); }) {
  if (options.deterministic && runner_->invariant_prefill_rows() > 0) {
    batch_.pack_invariant_prefills(runner_->invariant_prefill_rows());
  }
  stats_.name = name_;
  stats_.context_length = batch_.context_length();
  update_stats();
  if (runner_->needs_warm_up()) warm_up();
}

// In the constructor, while the engine thread waits for a first request: a burst like a
// prefill's, so that the warm-up's launches keep the turn's rules; a failure fails the load.
void LlmEngine::warm_up() {
  GpuBurst burst(burst_context_, BurstKind::prefill, 0, 0);
  stream_->encode(Op{.run = [this] { runner_->warm_up(batch_.prefill_chunk()); }, .bytes = 0});
  stream_->synchronize();
  const double ms = burst.done();
  std::lock_guard lock(mu_);
  stats_.warm_up_ms = ms;
}

LlmEngine::~LlmEngine() { stop(); }

std::future<GenerationResult> LlmEngine::submit(GenerationRequest request) {
  auto entry = std::make_unique<LlmBatch::Entry>();
  entry->request = std::move(request);
  entry->submitted = Clock::now();
  std::future<GenerationResult> future = entry->promise.get_future();
  try {
    batch_.validate(entry->request);  // reads only what never changes after construction
  } catch (const TokenOutsideVocabulary& error) {
    entry->promise.set_exception(std::make_exception_ptr(error.naming(name_)));
    return future;
  } catch (...) {
    entry->promise.set_exception(std::current_exception());
    return future;
  }
  if (entry->request.cancel.stop_requested()) {
    entry->promise.set_exception(std::make_exception_ptr(RequestCancelled(name_)));
    return future;
  }
  std::lock_guard lock(mu_);
  if (stopping_) {
    entry->promise.set_exception(std::make_exception_ptr(EngineStopped(name_)));
    return future;
  }
  if (queue_limit_ > 0 && queued_locked() >= queue_limit_) {
    entry->promise.set_exception(
        std::make_exception_ptr(QueueFull(name_, static_cast<int>(queue_limit_))));
    return future;
  }
  inbox_.push_back(std::move(entry));
  wake_.notify_all();
  return future;
}

void LlmEngine::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  thread_.request_stop();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

LlmEngineStats LlmEngine::stats() const {
  std::lock_guard lock(mu_);
  LlmEngineStats stats = stats_;
  stats.queued = queued_locked();
  return stats;
}

void LlmEngine::loop(std::stop_token stop) {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, stop, [&] { return !inbox_.empty() || !batch_.idle(); });
      const TimePoint picked_up = Clock::now();
      for (auto& entry : inbox_) batch_.enqueue(std::move(entry), picked_up);
      inbox_.clear();
      stats_.waiting_for_kv = batch_.waiting();  // with the inbox, so the queue count holds
    }
    if (stop.stop_requested()) break;
    cancel(batch_.take_cancelled());
    batch_.admit(Clock::now());
    update_stats();
    if (std::optional<StepPlan> plan = batch_.next_step()) run_step(std::move(*plan));
    update_stats();
  }
  std::vector<std::unique_ptr<LlmBatch::Entry>> left = batch_.take_all();
  {
    std::lock_guard lock(mu_);
    for (auto& entry : inbox_) left.push_back(std::move(entry));
    inbox_.clear();
  }
  fail(std::move(left), std::make_exception_ptr(EngineStopped(name_)));
}

void LlmEngine::run_step(StepPlan plan) {
  const BurstKind kind = plan.prefills ? BurstKind::prefill : BurstKind::decode;
  step_kind_.store(kind, std::memory_order_relaxed);
  StepResult result;
  std::optional<GpuBurst> burst;
  std::exception_ptr error;
  try {
    burst.emplace(burst_context_, kind, 0, batch_.context_tokens());
    // A batch-invariant prefill is never cut: on the GPU a piece's products would meet
    // other row or column counts than the prompt's alone (there its chunks are 256 rows).
    const std::size_t context =
        kind == BurstKind::prefill && !plan.batch_invariant ? attended_positions(plan) : 0;
    // The ops share the step: after a reset the stream may still finish them.
    const std::shared_ptr<ModelStep> step = runner_->begin(std::move(plan), burst->device_share());
    for (int i = 0; i < step->layers(); ++i) {
      encode_layer(*burst, step, i, context);
      if (i + 1 < step->layers()) {
        burst->yield_point(Boundary::layer);
        step->set_device_share(burst->device_share());
      }
    }
    stream_->encode(Op{.run = [step] { step->finish(); }, .bytes = 0});
    stream_->commit();
    batch_.prepare_masks();  // beside the forward pass, which the stream runs
    stream_->synchronize();
    result = step->take_output();
    burst->done();
  } catch (...) {
    error = std::current_exception();
  }
  // Outside the handler, so that this thread holds no reference to the exception once
  // the clients have it (fail() hands its references over).
  if (error) {
    stream_->wait_idle();  // nothing of the failed step may still touch the KV blocks
    if (burst) burst->failed();
    fail(batch_.fail_step(), std::move(error));
    return;
  }
  deliver(batch_.after_step(result, Clock::now()));
}

std::size_t LlmEngine::attended_positions(const StepPlan& plan) {
  std::size_t longest = 0;
  for (const SequenceStep& s : plan.sequences) {
    longest = std::max(longest, static_cast<std::size_t>(s.sequence->length) + s.tokens.size());
  }
  return longest;
}

// While the turn asks for pieces, a prefill layer (`context` > 0) comes in pieces of
// bounded time (the runner's cut: LayerPieces); another step's layer (short) is one piece,
// queued behind at most one other, so that the device never waits for the host and a
// hand-over waits for two layers at most. Otherwise the layer is one op, launched ahead.
void LlmEngine::encode_layer(GpuBurst& burst, const std::shared_ptr<ModelStep>& step, int layer,
                             std::size_t context) {
  const std::optional<double> budget = burst.piece_budget_ms();
  if (!budget || context == 0) {
    stream_->encode(Op{.run = [step, layer] { step->run_layer(layer); }, .bytes = 0});
    stream_->commit();
    if (budget) stream_->wait_in_flight(1);
    return;
  }
  encode_pieces(burst, step, layer, context, *budget);
}

// Each piece is queued behind the one running, so that the device does not wait for the
// host between them (36 us a piece on the H100, measured), and is timed by the stream's
// device time (the sizer learns its shape). A yield point follows each; a waiter owed the
// turn then waits for the piece running and the one queued, so each piece gets half the
// hold. The layer's last piece is waited for.
void LlmEngine::encode_pieces(GpuBurst& burst, const std::shared_ptr<ModelStep>& step, int layer,
                              std::size_t context, double budget_ms) {
  stream_->wait_idle();  // the stream's device time from here on is the pieces'
  LayerPieces pieces(pieces_, step->cut_layer(), context, budget_ms / 2);
  PieceClock clock(*stream_);
  while (!pieces.done() || clock.pending() > 0) {
    if (!pieces.done()) {
      std::vector<PieceSegment> piece = pieces.next();
      stream_->encode(piece_op(step, layer, piece));
      stream_->commit();
      clock.committed(std::move(piece));
      if (!pieces.done()) burst.yield_point(Boundary::queued_op);
    } else {
      stream_->wait_idle();
    }
    const PieceClock::Completed done = clock.take_completed();
    if (done.pieces == 0) continue;
    // Two pieces that completed together have one time: it bounds neither, and a first
    // launch in one (up to 107 ms measured for a new product size on the H100) would
    // teach the sizer that the other's size is slow.
    if (done.pieces == 1) pieces.record(done.segments, done.ms);
    std::lock_guard lock(mu_);
    stats_.prefill_pieces += done.pieces;
    stats_.prefill_piece_layers += pieces.layer_share(done.segments);
    // Pieces that completed together: their time together bounds each (and a waiter's).
    stats_.longest_piece_ms = std::max(stats_.longest_piece_ms, done.ms);
  }
}

EngineActivity LlmEngine::activity() const {
  return EngineActivity{.engine = name_,
                        .stream = stream_->name(),
                        .kind = step_kind_.load(std::memory_order_relaxed),
                        .state = state_.load(std::memory_order_relaxed)};
}

// Stats first, then the promises: a client that has its result sees stats that count it.
void LlmEngine::deliver(std::vector<std::unique_ptr<LlmBatch::Entry>> finished) {
  const auto failed = static_cast<std::size_t>(std::count_if(
      finished.begin(), finished.end(), [](const auto& entry) { return entry->error != nullptr; }));
  update_stats();
  {
    std::lock_guard lock(mu_);
    stats_.requests_done += finished.size() - failed;
    stats_.requests_failed += failed;
  }
  for (auto& entry : finished) {
    if (entry->error) {
      entry->promise.set_exception(std::move(entry->error));
    } else {
      entry->promise.set_value(std::move(entry->result));
    }
    notify_done(*entry);
  }
}

void LlmEngine::fail(std::vector<std::unique_ptr<LlmBatch::Entry>> entries,
                     std::exception_ptr error) {
  update_stats();
  {
    std::lock_guard lock(mu_);
    stats_.requests_failed += entries.size();
  }
  // Every reference is handed to a promise, none kept: the last client to drop the error
  // frees it, after its own reads.
  std::vector<std::exception_ptr> copies(entries.size(), error);
  error = nullptr;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i]->promise.set_exception(std::move(copies[i]));
    notify_done(*entries[i]);
  }
}

// Each client gets an exception of its own: nothing is shared between their threads.
void LlmEngine::cancel(std::vector<std::unique_ptr<LlmBatch::Entry>> entries) {
  if (entries.empty()) return;
  update_stats();
  {
    std::lock_guard lock(mu_);
    stats_.requests_cancelled += entries.size();
  }
  for (auto& entry : entries) {
    entry->promise.set_exception(std::make_exception_ptr(RequestCancelled(name_)));
    notify_done(*entry);
  }
}

void LlmEngine::notify_done(LlmBatch::Entry& entry) noexcept {
  if (!entry.request.on_done) return;
  try {
    entry.request.on_done();
  } catch (...) {
    // The future holds the outcome already; a failing notification cannot change it.
  }
}

void LlmEngine::update_stats() {
  std::lock_guard lock(mu_);
  stats_.waiting_for_kv = batch_.waiting();
  stats_.running = batch_.running();
  stats_.kv_blocks_total = batch_.pool().total_blocks();
  stats_.kv_blocks_available = batch_.pool().available_blocks();
  stats_.kv_blocks_cached = batch_.pool().cached_blocks();
  stats_.counters = batch_.counters();
}

}  // namespace baton
