// The ledger's schema: its tables, its version (PRAGMA user_version), the upgrade of an
// older file in place, and the check that a file is a baton ledger at all. A file that
// is not (not SQLite, another program's database, a newer schema) is the user's input,
// so it is a LedgerFormatError, which the CLI reports with the path and exit code 2,
// never SQLite's own words.
// Versions: 1 intervals, events, runs; 2 added intervals.bursts; 3 added the
// stream_intervals table (the GPU-side exposure) and runs.streams_recorded, which is 0
// for the runs an older baton wrote: they have no stream intervals, and a reader must
// not take that for zero; 4 added runs.driver, the GPU driver's version (NULL on the
// CPU and for older runs); 5 added gpu_polls and gpu_process_samples, what NVML said each
// process used of the GPU (none for older runs, CPU runs, or where NVML was unavailable);
// 6 added experiments and experiment_blocks: a live A/B experiment's plan and verdict, and
// which runs were its blocks, with their arms.
// Thread-safety: functions of one Database, which belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "baton/ledger/sqlite.h"

namespace baton {

inline constexpr int kLedgerSchemaVersion = 6;

// "PATH is not a baton ledger: WHY" (or, for a newer schema, what wrote it).
class LedgerFormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Reading: the schema version (1 to kLedgerSchemaVersion) of the ledger in `db`. Throws
// LedgerFormatError when `db` is not a ledger this build reads.
std::int64_t check_ledger(Database& db, const std::filesystem::path& path);

// Writing: gives an empty database the schema, or upgrades an older ledger in place, in
// one transaction. Throws LedgerFormatError, changing nothing, for anything else.
void create_or_upgrade_ledger(Database& db, const std::filesystem::path& path);

}  // namespace baton
