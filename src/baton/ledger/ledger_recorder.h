// LedgerRecorder: writes what an EngineHost sees into a Ledger: every finished burst as a
// busy interval, every fault event as an event row. Steady-clock times are turned into
// Unix seconds through one reference pair taken at construction, so intervals keep
// their exact lengths and order even if the wall clock is adjusted during the run.
// Thread-safety: burst_done() and event() are thread-safe (the Ledger queues).
#pragma once

#include <chrono>

#include "baton/engine/burst_observer.h"
#include "baton/ledger/ledger.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

class LedgerRecorder final : public BurstObserver {
 public:
  LedgerRecorder(Ledger& ledger, std::int64_t run_id);

  void burst_done(const BurstRecord& burst) override;
  void event(const FaultEvent& event);
  double unix_seconds(TimePoint t) const;

 private:
  Ledger& ledger_;
  const std::int64_t run_id_;
  const TimePoint steady_zero_;
  const double unix_zero_;
};

}  // namespace baton
