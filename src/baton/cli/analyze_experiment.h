// `baton analyze --experiment --ledger PATH`: a live experiment's verdict (issue 51) from
// the ledger alone: its blocks' arms and exposure, the hangs that began in them, the plan's
// design, through the same sequential test the server ran (analysis/sequential_rate_test.h),
// beside the verdict the server recorded.
// Thread-safety: used from main() only.
#pragma once

#include <ostream>
#include <string>

namespace baton {

// Reports every experiment of the ledger; returns the exit code (0; 1 when it holds none).
// Throws std::invalid_argument for a missing file or one that is not a ledger.
int analyze_experiments(const std::string& ledger, bool json, std::ostream& out, std::ostream& err);

}  // namespace baton
