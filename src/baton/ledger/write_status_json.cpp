#include "baton/ledger/write_status_json.h"

namespace baton {

nlohmann::json to_json(const LedgerWriteStatus& status) {
  const char* state = status.incomplete() ? "incomplete" : status.failing() ? "failing" : "ok";
  nlohmann::json out = {{"state", state},
                        {"rows_written", status.rows_written},
                        {"rows_held", status.rows_held},
                        {"rows_lost", status.rows_lost},
                        {"events_lost", status.events_lost},
                        {"failed_writes", status.failed_commits},
                        {"run_end_lost", status.run_end_lost}};
  if (!status.last_error.empty()) out["last_error"] = status.last_error;
  return out;
}

}  // namespace baton
