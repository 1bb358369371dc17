// A ledger's write status (ledger.h) as JSON, for `repro --json` and `GET /health`.
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "baton/ledger/ledger.h"

namespace baton {

// {"state": "ok"|"failing"|"incomplete", "rows_written", "rows_held", "rows_lost", "events_lost",
//  "failed_writes", "run_end_lost", and "last_error" once a write has failed}.
nlohmann::json to_json(const LedgerWriteStatus& status);

}  // namespace baton
