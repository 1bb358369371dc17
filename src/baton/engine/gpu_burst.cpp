#include "baton/engine/gpu_burst.h"

namespace baton {
namespace {

// Sets the engine `waiting` before the hold is made (the hold blocks for the turn).
BurstRecord ask(const BurstContext& context, BurstKind kind, std::uint64_t request_id,
                std::size_t context_tokens) {
  context.state.store(EngineState::waiting, std::memory_order_relaxed);
  return BurstRecord{.engine = context.engine,
                     .kind = kind,
                     .request_id = request_id,
                     .context_tokens = context_tokens,
                     .asked = Clock::now()};
}

}  // namespace

GpuBurst::GpuBurst(const BurstContext& context, BurstKind kind, std::uint64_t request_id,
                   std::size_t context_tokens)
    : context_(context),
      record_(ask(context, kind, request_id, context_tokens)),
      hold_(context.turn, context.client, kind) {
  record_.granted = Clock::now();
  context_.state.store(EngineState::running, std::memory_order_relaxed);
}

GpuBurst::~GpuBurst() {
  if (!finished_) finish(false);
}

double GpuBurst::device_share() const { return context_.turn.device_share(context_.client); }

std::optional<double> GpuBurst::piece_budget_ms() const {
  return context_.turn.piece_budget_ms(context_.client, record_.kind);
}

void GpuBurst::yield_point(Boundary boundary) { record_.yielded += hold_.yield_point(boundary); }

double GpuBurst::done() {
  hold_.release();
  finish(true);
  return millis_between(record_.asked, record_.done);
}

void GpuBurst::failed() {
  if (!finished_) finish(false);
}

void GpuBurst::finish(bool ok) {
  finished_ = true;
  hold_.release_if_held();
  record_.done = Clock::now();
  record_.ok = ok;
  context_.state.store(EngineState::idle, std::memory_order_relaxed);
  for (BurstObserver* observer : context_.observers) observer->burst_done(record_);
}

}  // namespace baton
