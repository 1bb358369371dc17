#include "baton/host/engine_host.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "baton/host/make_runner.h"
#include "baton/turn/make_turn.h"

namespace baton {
namespace {

std::shared_ptr<HostSegment> attach_host_segment(const TurnOptions& options) {
  if (options.scope != TurnScope::host) return nullptr;
  return std::make_shared<HostSegment>(options.host_name);
}

}  // namespace

EngineHost::EngineHost(std::unique_ptr<Device> device, const TurnOptions& turn_options,
                       const WatchdogOptions& watchdog_options,
                       std::unique_ptr<FaultInjector> injector,
                       const std::vector<TurnOptions>& other_turns)
    : injector_(std::move(injector)),
      watchdog_(watchdog_options, faults_),
      slowdowns_(watchdog_options.slowdown_factor, watchdog_options.slowdown_min_excess, faults_,
                 [this] { return activity(); }),
      host_segment_(attach_host_segment(turn_options)),
      host_overlap_(host_segment_ ? std::make_unique<HostOverlapMeter>(host_segment_) : nullptr),
      device_(std::move(device)),
      turn_(make_host_turn(turn_options, other_turns)),
      runners_(make_runner_factory(*device_)) {
  // Before any stream commits: the host-wide meter sees every busy interval.
  if (host_overlap_) device_->add_observer(*host_overlap_);
  if (injector_) device_->add_observer(*injector_);
  device_->add_observer(watchdog_);
  watchdog_.set_activity_probe([this] { return activity(); });
  watchdog_.watch(device_->default_stream(), "embedding-executor");
  watchdog_.start();
}

EngineHost::~EngineHost() { stop(); }

std::unique_ptr<GpuTurn> EngineHost::make_host_turn(const TurnOptions& first,
                                                    const std::vector<TurnOptions>& others) {
  if (others.empty()) return make_turn(first, device_->default_stream(), host_segment_);
  std::vector<SwitchableTurn::Arm> arms;
  const auto add = [&](const TurnOptions& options) {
    arms.push_back({.name = describe(options),
                    .turn = make_turn(options, device_->default_stream(), host_segment_)});
  };
  add(first);
  for (const TurnOptions& options : others) add(options);
  auto turn = std::make_unique<SwitchableTurn>(std::move(arms));
  switchable_ = turn.get();
  return turn;
}

Engine& EngineHost::add_engine(const std::string& name, std::unique_ptr<Workload> workload) {
  std::unique_ptr<Engine> engine;
  const bool embed = workload->kind() == BurstKind::embed;
  if (embed) {
    engine = std::make_unique<Engine>(name, std::move(workload), embedding_executor(),
                                      device_->default_stream(), *turn_);
  } else {
    engine =
        std::make_unique<Engine>(name, std::move(workload), device_->create_stream(name), *turn_);
  }
  Engine& added = *engine;
  host(std::move(engine), !embed);  // set-up only: no seat
  return added;
}

Stream& EngineHost::reserve_seat(const std::string& name, bool own_stream) {
  Seat seat;
  Stream* stream = &device_->default_stream();
  if (own_stream) {
    seat.stream = device_->create_stream(name);
    stream = seat.stream.get();
    watchdog_.watch(*stream, name);
  } else {
    embedding_executor();  // made now, so that no seated engine makes it later
  }
  seat.client = turn_->register_client(name, *stream);
  seats_.emplace(name, std::move(seat));
  return *stream;
}

const EngineHost::Seat* EngineHost::seat(const std::string& name) const {
  auto it = seats_.find(name);
  return it == seats_.end() ? nullptr : &it->second;
}

LlmEngine& EngineHost::add_llm_engine(const std::string& name, const LlamaModel& model,
                                      const BpeTokenizer* tokenizer, LlmBatchOptions options) {
  options.kv_value_bytes = kv_value_bytes(*device_);
  options.mask_threads = mask_threads_for(*device_);
  const Seat* seated = seat(name);
  if (seated != nullptr && !seated->stream) {
    throw std::logic_error("[EngineHost] the seat of " + name + " is an embedding engine's");
  }
  std::unique_ptr<LlmEngine> engine;
  if (seated != nullptr) {
    engine = std::make_unique<LlmEngine>(name, model, tokenizer, options, seated->stream, *turn_,
                                         runners_, seated->client);
  } else {
    engine = std::make_unique<LlmEngine>(name, model, tokenizer, options,
                                         device_->create_stream(name), *turn_, runners_);
  }
  LlmEngine& added = *engine;
  host(std::move(engine), seated == nullptr);
  return added;
}

EmbeddingEngine& EngineHost::add_embedding_engine(const std::string& name, const LlamaModel& model,
                                                  Pooling pooling, std::size_t kv_budget_bytes) {
  const Seat* seated = seat(name);
  if (seated != nullptr && seated->stream) {
    throw std::logic_error("[EngineHost] the seat of " + name + " is an LLM engine's");
  }
  std::optional<TurnClientId> client;
  if (seated != nullptr) client = seated->client;
  auto engine = std::make_unique<EmbeddingEngine>(
      name, model, pooling, embedding_executor(), device_->default_stream(), *turn_, runners_,
      kv_budget_bytes, kv_value_bytes(*device_), client);
  EmbeddingEngine& added = *engine;
  host(std::move(engine), false);  // the default stream is watched from the start
  return added;
}

void EngineHost::remove_engine(const HostedEngine& engine) {
  std::unique_ptr<HostedEngine> removed;
  {
    std::lock_guard lock(engines_mu_);
    auto it = std::find_if(engines_.begin(), engines_.end(),
                           [&](const auto& e) { return e.get() == &engine; });
    if (it == engines_.end()) return;
    removed = std::move(*it);
    engines_.erase(it);
  }
  // Outside the lock: the engine's thread may still report a burst, whose observers ask
  // for activity().
  removed->stop();
  if (&removed->stream() != &device_->default_stream()) removed->stream().wait_idle();
  // A stream of its own (no seat keeps it for the next engine) goes with the engine: the
  // watchdog must not read it after.
  const Seat* seated = seat(removed->name());
  if (&removed->stream() != &device_->default_stream() && (seated == nullptr || !seated->stream)) {
    watchdog_.unwatch(removed->stream());
  }
}

Stream& EngineHost::add_watched_stream(const std::string& name) {
  own_streams_.push_back(device_->create_stream(name));
  watchdog_.watch(*own_streams_.back(), name);
  return *own_streams_.back();
}

Worker& EngineHost::embedding_executor() {
  if (!embedding_executor_) embedding_executor_ = std::make_unique<Worker>("embedding-executor");
  return *embedding_executor_;
}

void EngineHost::host(std::unique_ptr<HostedEngine> engine, bool watch_stream) {
  if (watch_stream) watchdog_.watch(engine->stream(), engine->name());
  engine->add_burst_observer(slowdowns_);
  for (BurstObserver* observer : burst_observers_) engine->add_burst_observer(*observer);
  std::lock_guard lock(engines_mu_);
  engines_.push_back(std::move(engine));
}

OverlapReading EngineHost::overlap(TimePoint now) const {
  return host_overlap_ ? host_overlap_->read(now) : device_->overlap().read(now);
}

std::vector<EngineActivity> EngineHost::activity() const {
  std::lock_guard lock(engines_mu_);
  std::vector<EngineActivity> all;
  all.reserve(engines_.size());
  for (const auto& engine : engines_) all.push_back(engine->activity());
  return all;
}

void EngineHost::stop() {
  std::vector<HostedEngine*> engines;
  {
    std::lock_guard lock(engines_mu_);
    for (auto& engine : engines_) engines.push_back(engine.get());
  }
  // Outside the lock, as in remove_engine().
  for (HostedEngine* engine : engines) engine->stop();
  if (embedding_executor_) embedding_executor_->stop();
  // Work left in flight (an error path under `concurrent` does not drain) completes while
  // the engines its observers look at still exist; the watchdog frees a hung stream.
  for (HostedEngine* engine : engines) engine->stream().wait_idle();
  for (auto& [name, seat] : seats_) {
    if (seat.stream) seat.stream->wait_idle();
  }
  for (auto& stream : own_streams_) stream->wait_idle();
  device_->default_stream().wait_idle();
  watchdog_.stop();
}

}  // namespace baton
