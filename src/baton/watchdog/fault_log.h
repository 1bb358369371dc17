// FaultLog: every detected fault of this process, in memory, and the fatal latch the
// process waits on to exit with code 70.
// Thread-safety: all members are thread-safe (one mutex, one condition variable).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "baton/watchdog/fault_event.h"

namespace baton {

class FaultLog {
 public:
  using Sink = std::function<void(const FaultEvent&)>;
  // Set-up only, before any event: also hands every stored event to `sink` (the ledger,
  // the server's health and metrics), in the order they were added.
  void add_sink(Sink sink) { sinks_.push_back(std::move(sink)); }

  // Records `event`; a fatal one also trips the latch. Only the first fatal event is kept:
  // later reports of the same fatal state add nothing.
  void record(FaultEvent event);
  void count_recovered();

  std::vector<FaultEvent> events() const;
  std::uint64_t recovered() const;
  std::optional<FaultEvent> fatal() const;
  // Waits up to `timeout` for a fatal event; true when there is one.
  bool wait_fatal_for(std::chrono::duration<double> timeout);

 private:
  std::vector<Sink> sinks_;  // set-up only
  mutable std::mutex mu_;
  std::condition_variable fatal_cv_;
  std::vector<FaultEvent> events_;   // guarded by mu_
  std::optional<FaultEvent> fatal_;  // guarded by mu_
  std::uint64_t recovered_ = 0;      // guarded by mu_
};

}  // namespace baton
