// ExposureCounters: the ledger's evidence as Prometheus counters, so that a fleet's
// Prometheus server holds every host's exposure and faults (`baton analyze --by host`
// reads the same figures from ledgers). Seconds at least one LLM engine was busy, by the
// state of the engines (analysis/strata.h: how many busy, a prefill in flight, a long
// context) and the server's policy and backend; fault events by class and blamed engine
// with the state at the moment each began.
// Every series of the engines named at construction exists from the start, at 0, so that
// a reader of the raw samples sees each count rise from a sample before it (a series born
// with its first event would hide that event); baton_process_start_time_seconds tells a
// reader which first samples are a process's start.
// Bursts and faults arrive after the fact (a burst when it ends, a hang when detected,
// placed where it began), so the counters cover the time up to `settle_after` ago:
// later, nothing can still arrive that falls before that horizon.
// Thread-safety: every member is thread-safe (two mutexes: the reports' and the renders').
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "baton/analysis/hang_analysis.h"
#include "baton/analysis/strata.h"
#include "baton/turn/burst_observer.h"
#include "baton/watchdog/fault_event.h"

namespace baton {

class ExposureCounters final : public BurstObserver {
 public:
  struct Options {
    std::string policy;   // described, as the ledger's runs hold it: the first
    std::string backend;  // cpu, cuda
    std::int64_t long_context = AnalysisOptions{}.long_context;
    // Longer than any burst and than any hang's detection delay: the watchdog's deadline,
    // its poll and a second.
    std::chrono::milliseconds settle_after{5000};
    std::vector<std::string> engines;  // whose fault series start at 0 ("" is added)
    double start_unix = 0.0;           // the process's start, Unix seconds
    // The policies the server may change to (set_policy); their series start at 0 too.
    std::vector<std::string> other_policies;
  };
  ExposureCounters(Options options, TimePoint start);

  void burst_done(const BurstRecord& burst) override;
  // Bursts that end from now on count under `policy` (a live change: no burst is in flight).
  void set_policy(std::string policy);
  void fault(const FaultEvent& event);
  // Appends the two counter families, settled up to `now` - settle_after.
  void render(std::string& out, TimePoint now);

 private:
  // Takes the window up to `horizon` out of the pending bursts and events (under mu_),
  // then places it and adds it to the totals (under settle_mu_ only): an engine reporting
  // a burst never waits for a scrape's arithmetic.
  void settle(double horizon);

  const Options options_;
  std::mutex mu_;
  std::string policy_;  // guarded by mu_
  struct Pending {
    BusyInterval interval;
    std::uint64_t request = 0;
  };
  std::vector<Pending> pending_;            // not yet wholly before the horizon; guarded by mu_
  std::vector<HangRecord> events_;          // not yet before the horizon; guarded by mu_
  double settled_ = 0.0;                    // steady seconds taken out up to; guarded by mu_
  std::mutex settle_mu_;                    // one render at a time; taken before mu_, never after
  std::map<StratumState, double> seconds_;  // guarded by settle_mu_
  // (class, engine, busy state or none) -> events; guarded by settle_mu_
  std::map<std::tuple<std::string, std::string, std::optional<StratumState>>, std::uint64_t>
      faults_;
};

}  // namespace baton
