// BurstObserver: what sees every burst an engine finishes (the slowdown detector now,
// the ledger later), and EngineActivity: what an engine is doing at a given moment.
// Thread-safety: burst_done() is called from engine threads at once; implementations
// must be thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "baton/common/clock.h"
#include "baton/turn/burst_kind.h"

namespace baton {

struct BurstRecord {
  std::string engine;
  BurstKind kind = BurstKind::decode;
  std::uint64_t request_id = 0;
  std::size_t context_tokens = 0;
  TimePoint asked{};    // the engine asked for the turn
  TimePoint granted{};  // it got the turn
  TimePoint done{};     // its work completed (or failed)
  // Handed over at yield points inside the burst, waiting for the turn back: another
  // engine's time, not this burst's.
  std::chrono::nanoseconds yielded{};
  bool ok = true;

  // From getting the turn to done, less the waits at yield points: the burst's own time.
  double running_seconds() const {
    return seconds_between(granted, done) - std::chrono::duration<double>(yielded).count();
  }
};

class BurstObserver {
 public:
  virtual ~BurstObserver() = default;
  virtual void burst_done(const BurstRecord& burst) = 0;
};

enum class EngineState { idle, waiting, running };

struct EngineActivity {
  std::string engine;
  std::string stream;
  BurstKind kind = BurstKind::decode;  // of the current burst, when not idle
  EngineState state = EngineState::idle;
};

constexpr std::string_view to_string(EngineState state) {
  switch (state) {
    case EngineState::idle:
      return "idle";
    case EngineState::waiting:
      return "waiting";
    case EngineState::running:
      return "running";
  }
  return "idle";
}

}  // namespace baton
