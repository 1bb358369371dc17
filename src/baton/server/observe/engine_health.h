// EngineHealth: whether each engine can answer right now, for `GET /health` and
// `GET /v1/engines`. Unlike a server that answers 200 while its completions hang, baton
// asks its own watchdog's evidence:
// - hung:       its stream has made no progress for the watchdog's deadline (the
//               watchdog is about to reset it);
// - recovering: a hang or device error was detected on it, and no burst has succeeded
//               since (for at most `settle` while it gets no work);
// - fatal:      the device is lost; only a restart helps;
// - ok:         none of these.
// Fed by the fault log (fault()) and as a burst observer.
// Thread-safety: all members are thread-safe (one mutex); watch() during set-up only.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "baton/gpu/stream.h"
#include "baton/turn/burst_observer.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

struct EngineHealthState {
  std::string engine;
  std::string state;   // ok, hung, recovering, fatal
  std::string reason;  // empty when ok
  std::uint64_t faults = 0;
  std::vector<FaultEvent> last_faults;  // the newest few, oldest first
};

class EngineHealth final : public BurstObserver {
 public:
  EngineHealth(std::chrono::milliseconds hang_deadline, std::chrono::seconds settle);

  // `stream` (may be null: no hang check) must outlive the health.
  void watch(const std::string& engine, const Stream* stream);
  // Every fault event of the process (a FaultLog sink).
  void fault(const FaultEvent& event);
  void burst_done(const BurstRecord& burst) override;

  std::vector<EngineHealthState> states(TimePoint now = Clock::now()) const;

 private:
  struct Engine {
    const Stream* stream = nullptr;
    std::optional<TimePoint> recovering_since;
    std::string last_fault;
    std::uint64_t faults = 0;
    std::vector<FaultEvent> last_faults;
  };
  static constexpr std::size_t kLastFaultsKept = 5;

  const std::chrono::milliseconds hang_deadline_;
  const std::chrono::seconds settle_;
  mutable std::mutex mu_;
  std::map<std::string, Engine> engines_;  // guarded by mu_; keys fixed at set-up
  std::optional<std::string> fatal_;       // guarded by mu_
};

}  // namespace baton
