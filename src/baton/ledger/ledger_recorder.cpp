#include "baton/ledger/ledger_recorder.h"

namespace baton {

LedgerRecorder::LedgerRecorder(Ledger& ledger, std::int64_t run_id, WallReference wall)
    : ledger_(ledger), run_id_(run_id), wall_(wall) {}

void LedgerRecorder::burst_done(const BurstRecord& burst) {
  // Busy from asking for the turn: waiting for the device is exposure too.
  ledger_.record(IntervalRow{.run_id = run_id(),
                             .engine = burst.engine,
                             .kind = std::string(to_string(burst.kind)),
                             .start = unix_seconds(burst.asked),
                             .end = unix_seconds(burst.done),
                             .context_tokens = static_cast<std::int64_t>(burst.context_tokens),
                             .request_id = static_cast<std::int64_t>(burst.request_id)});
}

void LedgerRecorder::event(const FaultEvent& event) {
  // A hang is placed where it began: that is the exposure that caused it.
  const TimePoint at = event.onset.value_or(event.time);
  ledger_.record(EventRow{.run_id = run_id(),
                          .time = unix_seconds(at),
                          .error_class = std::string(to_string(event.kind)),
                          .engine = event.engine,
                          .stream = event.stream,
                          .in_flight = static_cast<std::int64_t>(event.in_flight),
                          .detail = event.detail});
}

}  // namespace baton
