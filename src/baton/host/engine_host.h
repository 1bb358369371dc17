// EngineHost: the composition root of a baton process. It owns the fault injector (if
// any), the device, the fault log, the watchdog, the slowdown detector, the GPU turn, the
// shared embedding executor and every engine, whatever it runs (synthetic workloads,
// LLMs), and tears them down in the reverse order (engines first, while the watchdog can
// still free a hung stream). Every engine's stream is watched and every burst observed.
// Engines come and go while the host runs only through seats: reserve_seat() (set-up)
// gives a name its stream and turn client for the host's life, so that the watchdog, the
// turn and the ledger keep one identity per name; an engine added on that seat can be
// removed (remove_engine) and another added later. An engine removed without a seat takes
// its stream with it, and the watchdog stops watching it first.
// Thread-safety: reserve_seat(), add_watched_stream(), add_burst_observer() and add_engine()
// during set-up only; add_llm_engine() and add_embedding_engine() on a reserved seat,
// remove_engine(), activity() and the accessors from any thread; stop() once the engines
// are no longer added or removed.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/engine/embedding/embedding_engine.h"
#include "baton/engine/llm/llm_engine.h"
#include "baton/engine/synthetic/engine.h"
#include "baton/gpu/device.h"
#include "baton/gpu/fault_injector.h"
#include "baton/turn/host_overlap.h"
#include "baton/turn/host_segment.h"
#include "baton/turn/switchable_turn.h"
#include "baton/turn/turn_options.h"
#include "baton/watchdog/fault_log.h"
#include "baton/watchdog/slowdown_detector.h"
#include "baton/watchdog/watchdog.h"

namespace baton {

class EngineHost {
 public:
  // `injector`, when given, must be the FaultHooks that `device` was made with. With
  // `other_turns`, the turn is a SwitchableTurn whose arms are `turn_options` (first, and
  // running) and those: its policy can change while the engines run.
  EngineHost(std::unique_ptr<Device> device, const TurnOptions& turn_options,
             const WatchdogOptions& watchdog_options = {},
             std::unique_ptr<FaultInjector> injector = nullptr,
             const std::vector<TurnOptions>& other_turns = {});
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // Set-up only: a seat named `name`: a stream of its own (`own_stream`, for an LLM engine)
  // or the default stream (an embedding engine), with its turn client, watched from now on.
  // Returns the seat's stream.
  Stream& reserve_seat(const std::string& name, bool own_stream);
  // A synthetic engine: an embed workload runs on the shared executor and the default
  // stream; any other gets its own thread and stream.
  Engine& add_engine(const std::string& name, std::unique_ptr<Workload> workload);
  // An LLM engine on its own thread and stream, its model run by the device's backend;
  // `model` and `tokenizer` (may be null) must outlive the engine. On a reserved seat of
  // `name` it takes the seat's stream (thread-safe); else it gets a new one (set-up only).
  LlmEngine& add_llm_engine(const std::string& name, const LlamaModel& model,
                            const BpeTokenizer* tokenizer, LlmBatchOptions options);
  // An embedding engine on the shared embedding executor and the default stream, as
  // every embedding engine of the host; `model` must outlive the engine. Thread-safe on a
  // reserved seat of `name`.
  // `kv_budget_bytes` bounds the tokens of one call.
  EmbeddingEngine& add_embedding_engine(const std::string& name, const LlamaModel& model,
                                        Pooling pooling,
                                        std::size_t kv_budget_bytes = std::size_t{64} << 20);
  // Set-up only: a stream of the host's own (not an engine's), watched like an engine's
  // and blamed on `name`; it lives as long as the host.
  Stream& add_watched_stream(const std::string& name);
  // Set-up only, before add_engine(): one more observer of every engine's bursts.
  void add_burst_observer(BurstObserver& observer) { burst_observers_.push_back(&observer); }

  // Takes `engine` out of the host: stops it (what it still holds fails with EngineStopped),
  // waits for its stream and destroys it. Its seat stays for the next engine of its name.
  void remove_engine(const HostedEngine& engine);

  Device& device() { return *device_; }
  GpuTurn& turn() { return *turn_; }
  // The turn when it can switch (other_turns given), else null.
  SwitchableTurn* switchable_turn() { return switchable_; }
  // The overlap of every stream the turn arbitrates as of `now`: host-wide under
  // --turn-scope host (every process on the turn's segment), else this device's.
  OverlapReading overlap(TimePoint now = Clock::now()) const;
  FaultLog& faults() { return faults_; }
  const FaultInjector* injector() const { return injector_.get(); }
  // Set-up only (while no engine is added or removed): the engines.
  const std::vector<std::unique_ptr<HostedEngine>>& engines() const { return engines_; }
  // What every engine is doing right now.
  std::vector<EngineActivity> activity() const;
  // Stops every engine (in-flight requests end with EngineStopped), then the executor
  // and the watchdog. No engine may be added or removed meanwhile (stop the threads that
  // do first); removing one afterwards is fine.
  void stop();

 private:
  // make_turn's policy, or a SwitchableTurn of `first` and `others` (sets switchable_).
  std::unique_ptr<GpuTurn> make_host_turn(const TurnOptions& first,
                                          const std::vector<TurnOptions>& others);
  struct Seat {
    std::shared_ptr<Stream> stream;  // null: the default stream
    TurnClientId client = 0;
  };
  // Watches the engine's own stream (when it has one and no seat watches it already) and
  // adds every burst observer.
  void host(std::unique_ptr<HostedEngine> engine, bool watch_stream);
  const Seat* seat(const std::string& name) const;

  // Everything a stream may call into outlives the device (and so every stream).
  std::unique_ptr<FaultInjector> injector_;
  FaultLog faults_;
  Watchdog watchdog_;
  SlowdownDetector slowdowns_;
  // Host scope only (else null): the turn's segment and the host-wide overlap meter.
  std::shared_ptr<HostSegment> host_segment_;
  std::unique_ptr<HostOverlapMeter> host_overlap_;
  std::unique_ptr<Device> device_;
  SwitchableTurn* switchable_ = nullptr;  // turn_, when it is one (set while turn_ is built)
  std::unique_ptr<GpuTurn> turn_;
  ModelRunnerFactory runners_;  // by the device's backend; model weights it uploaded
  std::vector<BurstObserver*> burst_observers_;  // set-up only
  Worker& embedding_executor();
  std::unique_ptr<Worker> embedding_executor_;  // made with the first embedding engine
  std::map<std::string, Seat> seats_;  // set-up only
  mutable std::mutex engines_mu_;
  std::vector<std::unique_ptr<HostedEngine>> engines_;  // guarded by engines_mu_
  std::vector<std::unique_ptr<Stream>> own_streams_;    // add_watched_stream()
};

}  // namespace baton
