// HostedEngine: what EngineHost hosts and watches, whatever the engine runs (a synthetic
// workload, an LLM with continuous batching, an embedding model): a name, the stream its
// bursts encode on (which the watchdog watches), what it is doing right now, the observers
// of its bursts, and a way to stop it. Every burst of every kind goes through GpuBurst.
// Thread-safety: add_burst_observer() during set-up only; the rest is thread-safe.
#pragma once

#include <string>

#include "baton/gpu/stream.h"
#include "baton/turn/burst_observer.h"
#include "baton/turn/turn_metrics.h"

namespace baton {

class HostedEngine {
 public:
  virtual ~HostedEngine() = default;
  virtual const std::string& name() const = 0;
  virtual Stream& stream() = 0;
  // Its client of the host's GPU turn (GpuTurn::set_weight gives it its share).
  virtual TurnClientId turn_client() const = 0;
  virtual EngineActivity activity() const = 0;
  // Set-up only, before any request: one more observer of every finished burst.
  virtual void add_burst_observer(BurstObserver& observer) = 0;
  // Fails what is queued or running with EngineStopped and refuses new requests.
  virtual void stop() = 0;
};

}  // namespace baton
