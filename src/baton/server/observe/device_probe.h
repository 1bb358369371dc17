// DeviceProbe: a device that dies while the server is idle (it ignores submissions, it
// faults) would otherwise be found only by the next client's request. Every `interval`
// of idleness the probe puts one empty op on the default stream under the GPU turn and
// waits for it, so the watchdog sees the fault then: a fatal one ends the server with 70
// (and `baton supervise` restarts it) and /health says so, with no request lost to it.
// Under `serialize` it takes the turn like an engine, so it adds no stream overlap.
// Thread-safety: owns its thread; the destructor stops and joins it. The turn, the stream
// and the idle predicate must outlive it.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "baton/gpu/stream.h"
#include "baton/turn/gpu_turn.h"

namespace baton {

class DeviceProbe {
 public:
  // `idle` says whether no request is in progress (the probe then runs).
  DeviceProbe(GpuTurn& turn, Stream& stream, std::function<bool()> idle,
              std::chrono::milliseconds interval);
  ~DeviceProbe();
  DeviceProbe(const DeviceProbe&) = delete;
  DeviceProbe& operator=(const DeviceProbe&) = delete;

  std::uint64_t probes() const { return probes_.load(std::memory_order_relaxed); }

 private:
  void run(std::stop_token stop);
  void probe_once();

  GpuTurn& turn_;
  Stream& stream_;
  TurnClientId client_;
  std::function<bool()> idle_;
  const std::chrono::milliseconds interval_;
  std::atomic<std::uint64_t> probes_{0};
  std::jthread thread_;  // last: starts after the rest
};

}  // namespace baton
