// EngineHost: owns the device, the GPU turn, the shared embedding executor and every
// engine, and tears them down in the right order (engines, executor, turn, device).
// Thread-safety: add_engine() during set-up only, before any request is submitted;
// everything else is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/engine/engine.h"
#include "baton/gpu/device.h"
#include "baton/turn/turn_options.h"

namespace baton {

class EngineHost {
 public:
  EngineHost(std::unique_ptr<Device> device, const TurnOptions& turn_options);
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  // An embed workload runs on the shared executor and the default stream; any other
  // gets its own thread and stream.
  Engine& add_engine(const std::string& name, std::unique_ptr<Workload> workload);

  Device& device() { return *device_; }
  GpuTurn& turn() { return *turn_; }
  const std::vector<std::unique_ptr<Engine>>& engines() const { return engines_; }
  // Stops every engine (in-flight requests end with EngineStopped), then the executor.
  void stop();

 private:
  std::unique_ptr<Device> device_;
  std::unique_ptr<GpuTurn> turn_;
  std::unique_ptr<Worker> embedding_executor_;  // made with the first embedding engine
  std::vector<std::unique_ptr<Engine>> engines_;
};

}  // namespace baton
