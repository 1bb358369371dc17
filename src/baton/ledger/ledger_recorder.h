// LedgerRecorder: writes what an EngineHost sees into a Ledger: every finished burst as a
// busy interval of its engine (the engine exposure: from asking for the turn to
// completion), every fault event as an event row. Steady-clock times are turned into
// Unix seconds through one WallReference, which a StreamRecorder of the same run shares.
// Thread-safety: burst_done(), event() and set_run() are thread-safe (the Ledger queues).
#pragma once

#include <atomic>

#include "baton/ledger/ledger.h"
#include "baton/ledger/wall_reference.h"
#include "baton/turn/burst_observer.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

class LedgerRecorder final : public BurstObserver {
 public:
  LedgerRecorder(Ledger& ledger, std::int64_t run_id, WallReference wall = {});

  void burst_done(const BurstRecord& burst) override;
  void event(const FaultEvent& event);
  double unix_seconds(TimePoint t) const { return wall_.unix_seconds(t); }
  // Rows from now on belong to run `run_id` (a live experiment's next block).
  void set_run(std::int64_t run_id) { run_id_.store(run_id, std::memory_order_relaxed); }
  std::int64_t run_id() const { return run_id_.load(std::memory_order_relaxed); }
  const WallReference& wall() const { return wall_; }

 private:
  Ledger& ledger_;
  std::atomic<std::int64_t> run_id_;
  const WallReference wall_;
};

}  // namespace baton
