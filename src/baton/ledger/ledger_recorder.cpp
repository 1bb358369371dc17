#include "baton/ledger/ledger_recorder.h"

namespace baton {

LedgerRecorder::LedgerRecorder(Ledger& ledger, std::int64_t run_id, WallReference wall)
    : ledger_(ledger), run_id_(run_id), wall_(wall) {}

void LedgerRecorder::burst_done(const BurstRecord& burst) {
  // Busy from asking for the turn: waiting for the device is exposure too.
  ledger_.record(IntervalRow{run_id_, burst.engine, std::string(to_string(burst.kind)),
                             unix_seconds(burst.asked), unix_seconds(burst.done),
                             static_cast<std::int64_t>(burst.context_tokens),
                             static_cast<std::int64_t>(burst.request_id)});
}

void LedgerRecorder::event(const FaultEvent& event) {
  // A hang is placed where it began: that is the exposure that caused it.
  const TimePoint at = event.onset.value_or(event.time);
  ledger_.record(EventRow{run_id_, unix_seconds(at), std::string(to_string(event.kind)),
                          event.engine, event.stream, static_cast<std::int64_t>(event.in_flight),
                          event.detail});
}

}  // namespace baton
