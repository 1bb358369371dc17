// What the analysis reads, wherever it came from (a ledger, or CSV logs of another
// server): every engine's busy intervals and the fault events. Times are seconds since
// the Unix epoch.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton {

struct BusyInterval {
  std::string engine;
  double start = 0.0;
  double end = 0.0;  // >= start
  std::optional<std::int64_t> context_tokens;
  std::string kind;  // prefill, decode, embed; empty when the source does not say (CSV)
};

struct HangRecord {
  double time = 0.0;
  std::string engine;                // the blamed engine; empty: unattributed
  std::string error_class = "hang";  // hang, timeout, ... as in the ledger's events table
};

struct ExposureInput {
  std::vector<BusyInterval> intervals;
  std::vector<HangRecord> hangs;
};

}  // namespace baton
