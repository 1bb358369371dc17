// StopSignals: SIGINT, SIGTERM and SIGHUP ask a long command (writing a model) to stop
// cleanly and remove what it left half-done, instead of dying in the middle. A watcher
// thread reads them from a SignalPipe (blocking the signals instead would miss the threads
// OpenBLAS starts before main). A signal the process ignores (nohup, a background job)
// stays ignored. A second signal ends the process at once, as the default would.
// Thread-safety: one per process at a time (it owns the SignalPipe); received() and
// throw_if_stopped() are thread-safe.
#pragma once

#include <signal.h>

#include <array>
#include <atomic>
#include <thread>

#include "baton/common/signal_pipe.h"

namespace baton {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop, 0 while none has.
  int received() const { return received_.load(std::memory_order_acquire); }
  // Throws Interrupted (common/interrupted.h) when a signal has asked to stop.
  void throw_if_stopped() const;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};

  void watch(std::stop_token stop);

  SignalPipe pipe_;
  std::atomic<int> received_{0};
  std::jthread watcher_;  // last: starts after the rest
};

}  // namespace baton
