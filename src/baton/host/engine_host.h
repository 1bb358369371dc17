// EngineHost: the composition root of a baton process. It owns the fault injector (if
// any), the device, the fault log, the watchdog, the slowdown detector, the GPU turn, the
// shared embedding executor and every engine, whatever it runs (synthetic workloads,
// LLMs), and tears them down in the reverse order (engines first, while the watchdog can
// still free a hung stream). Every engine's stream is watched and every burst observed.
// Thread-safety: add_engine() during set-up only, before any request is submitted;
// everything else is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/engine/embedding_engine.h"
#include "baton/engine/engine.h"
#include "baton/engine/llm_engine.h"
#include "baton/gpu/device.h"
#include "baton/gpu/fault_injector.h"
#include "baton/turn/turn_options.h"
#include "baton/watchdog/fault_log.h"
#include "baton/watchdog/slowdown_detector.h"
#include "baton/watchdog/watchdog.h"

namespace baton {

class EngineHost {
 public:
  // `injector`, when given, must be the FaultHooks that `device` was made with.
  EngineHost(std::unique_ptr<Device> device, const TurnOptions& turn_options,
             const WatchdogOptions& watchdog_options = {},
             std::unique_ptr<FaultInjector> injector = nullptr);
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // A synthetic engine: an embed workload runs on the shared executor and the default
  // stream; any other gets its own thread and stream.
  Engine& add_engine(const std::string& name, std::unique_ptr<Workload> workload);
  // An LLM engine on its own thread and stream, its model run by the device's backend;
  // `model` and `tokenizer` (may be null) must outlive the host.
  LlmEngine& add_llm_engine(const std::string& name, const LlamaModel& model,
                            const BpeTokenizer* tokenizer, LlmBatchOptions options);
  // An embedding engine on the shared embedding executor and the default stream, as
  // every embedding engine of the host; `model` must outlive the host.
  // `kv_budget_bytes` bounds the tokens of one call.
  EmbeddingEngine& add_embedding_engine(const std::string& name, const LlamaModel& model,
                                        Pooling pooling,
                                        std::size_t kv_budget_bytes = std::size_t{64} << 20);
  // Set-up only: a stream of the host's own (not an engine's), watched like an engine's
  // and blamed on `name`; it lives as long as the host.
  Stream& add_watched_stream(const std::string& name);
  // Set-up only, before add_engine(): one more observer of every engine's bursts.
  void add_burst_observer(BurstObserver& observer) { burst_observers_.push_back(&observer); }

  Device& device() { return *device_; }
  GpuTurn& turn() { return *turn_; }
  FaultLog& faults() { return faults_; }
  const FaultInjector* injector() const { return injector_.get(); }
  const std::vector<std::unique_ptr<HostedEngine>>& engines() const { return engines_; }
  // What every engine is doing right now.
  std::vector<EngineActivity> activity() const;
  // Stops every engine (in-flight requests end with EngineStopped), then the executor
  // and the watchdog.
  void stop();

 private:
  // Watches the engine's own stream (when it has one) and adds every burst observer.
  void host(std::unique_ptr<HostedEngine> engine, bool own_stream);

  // Everything a stream may call into outlives the device (and so every stream).
  std::unique_ptr<FaultInjector> injector_;
  FaultLog faults_;
  Watchdog watchdog_;
  SlowdownDetector slowdowns_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<GpuTurn> turn_;
  ModelRunnerFactory runners_;  // by the device's backend; model weights it uploaded
  std::vector<BurstObserver*> burst_observers_;  // set-up only
  Worker& embedding_executor();
  std::unique_ptr<Worker> embedding_executor_;  // made with the first embedding engine
  std::vector<std::unique_ptr<HostedEngine>> engines_;
  std::vector<std::unique_ptr<Stream>> own_streams_;  // add_watched_stream()
};

}  // namespace baton
