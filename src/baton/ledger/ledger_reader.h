// Reading a ledger back for the analysis: the busy intervals (of engines, and of streams
// when every run recorded them), fault events and GPU polls of its runs, optionally only
// of the runs under one policy. Opens the file read-only, so a ledger that a running
// server is writing can be analysed (WAL lets readers in).
// Thread-safety: a pure function of the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "baton/analysis/exposure_input.h"

namespace baton {

struct LedgerRun {
  std::int64_t id = 0;
  double start = 0.0;
  std::optional<double> stop;
  std::string backend;
  std::string policy;
  std::optional<std::int64_t> exit_code;
  bool streams_recorded = false;  // false for runs written before schema version 3
  std::string driver;             // empty: none recorded (the CPU, or before version 4)
};

struct LedgerContents {
  std::vector<LedgerRun> runs;
  ExposureInput input;
};

// Throws std::invalid_argument when there is no file at `path` (a usage error) and
// LedgerFormatError (an invalid_argument too) when the file is not a ledger this build
// can read. With `policy`, only
// the runs recorded under that policy count (e.g. "concurrent", "serialize/layer"); a
// policy that no run has is a std::invalid_argument naming the policies the ledger holds.
LedgerContents read_ledger(const std::filesystem::path& path,
                           const std::optional<std::string>& policy = std::nullopt);

}  // namespace baton
