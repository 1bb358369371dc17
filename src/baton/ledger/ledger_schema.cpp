#include "baton/ledger/ledger_schema.h"

#include <set>
#include <vector>

namespace baton {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY,
  start REAL NOT NULL,
  stop REAL,
  version TEXT NOT NULL,
  backend TEXT NOT NULL,
  policy TEXT NOT NULL,
  exit_code INTEGER,
  streams_recorded INTEGER NOT NULL DEFAULT 0,
  driver TEXT
);
CREATE TABLE IF NOT EXISTS intervals (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  engine TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('prefill', 'decode', 'embed')),
  start REAL NOT NULL,
  end REAL NOT NULL CHECK (end >= start),
  context_tokens INTEGER,
  request_id INTEGER,
  bursts INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS intervals_by_start ON intervals(start);
CREATE TABLE IF NOT EXISTS stream_intervals (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  stream TEXT NOT NULL,
  start REAL NOT NULL,
  end REAL NOT NULL CHECK (end >= start)
);
CREATE INDEX IF NOT EXISTS stream_intervals_by_start ON stream_intervals(start);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  time REAL NOT NULL,
  class TEXT NOT NULL,
  engine TEXT,
  stream TEXT,
  in_flight INTEGER,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS events_by_time ON events(time);
CREATE TABLE IF NOT EXISTS gpu_polls (
  id INTEGER PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  start REAL NOT NULL,
  end REAL NOT NULL CHECK (end >= start),
  host_pids INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS gpu_polls_by_start ON gpu_polls(start);
CREATE TABLE IF NOT EXISTS gpu_process_samples (
  poll_id INTEGER NOT NULL REFERENCES gpu_polls(id),
  pid INTEGER NOT NULL,
  process TEXT,
  own INTEGER NOT NULL,
  sm_percent REAL NOT NULL,
  mem_percent REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS gpu_process_samples_by_poll ON gpu_process_samples(poll_id);
CREATE TABLE IF NOT EXISTS experiments (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  start REAL NOT NULL,
  plan TEXT NOT NULL,
  stop REAL,
  verdict TEXT
);
CREATE TABLE IF NOT EXISTS experiment_blocks (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id),
  experiment_id INTEGER NOT NULL REFERENCES experiments(id),
  block INTEGER NOT NULL,
  arm INTEGER NOT NULL,
  arm_name TEXT NOT NULL,
  switch_ms REAL NOT NULL,
  exposure_hours REAL
);
)sql";

LedgerFormatError not_a_ledger(const std::filesystem::path& path, const std::string& why) {
  return LedgerFormatError(path.string() + " is not a baton ledger: " + why);
}

// The first read of a file that is not SQLite fails with SQLITE_NOTADB.
std::int64_t schema_version(Database& db, const std::filesystem::path& path) {
  try {
    return db.user_version();
  } catch (const SqliteError& error) {
    if (error.code() == SQLITE_NOTADB) throw not_a_ledger(path, "not an SQLite database");
    throw;
  }
}

std::set<std::string> table_names(Database& db) {
  Statement s(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
  std::set<std::string> names;
  while (s.step()) names.insert(s.column_text(0));
  return names;
}

std::vector<std::string> tables_of(std::int64_t version) {
  std::vector<std::string> tables{"runs", "intervals", "events"};
  if (version >= 3) tables.push_back("stream_intervals");
  if (version >= 5) tables.insert(tables.end(), {"gpu_polls", "gpu_process_samples"});
  if (version >= 6) tables.insert(tables.end(), {"experiments", "experiment_blocks"});
  return tables;
}

// Why `db`, of schema `version` (1 or more), lacks a ledger's tables; empty if it has them.
std::string missing_tables(Database& db, std::int64_t version) {
  const std::set<std::string> found = table_names(db);
  std::string missing;
  for (const std::string& table : tables_of(version)) {
    if (!found.contains(table)) missing += (missing.empty() ? "" : ", ") + table;
  }
  return missing.empty() ? missing : "no table " + missing;
}

// Checks everything but an empty database (version 0, no table), which only a writer
// accepts. Returns the version.
std::int64_t check_not_foreign(Database& db, const std::filesystem::path& path) {
  const std::int64_t version = schema_version(db, path);
  if (version > kLedgerSchemaVersion) {
    throw LedgerFormatError(path.string() +
                            " was written by a newer baton (ledger schema version " +
                            std::to_string(version) + "; this baton knows up to " +
                            std::to_string(kLedgerSchemaVersion) + ")");
  }
  if (version < 0) throw not_a_ledger(path, "schema version " + std::to_string(version));
  if (version == 0) {
    const std::set<std::string> tables = table_names(db);
    if (!tables.empty() && !tables.contains("runs")) {
      throw not_a_ledger(path, "an SQLite database without a runs table");
    }
    if (!tables.empty()) throw not_a_ledger(path, "an SQLite database without a schema version");
  }
  if (version > 0) {
    if (const std::string missing = missing_tables(db, version); !missing.empty()) {
      throw not_a_ledger(path, "schema version " + std::to_string(version) + " but " + missing);
    }
  }
  return version;
}

void upgrade(Database& db, std::int64_t from) {
  // CREATE ... IF NOT EXISTS adds what a version lacked, ALTER the columns of old tables.
  db.exec(kSchema);
  if (from == 1) db.exec("ALTER TABLE intervals ADD COLUMN bursts INTEGER NOT NULL DEFAULT 1");
  // The runs an older baton wrote recorded no stream intervals: 0 says so.
  if (from == 1 || from == 2) {
    db.exec("ALTER TABLE runs ADD COLUMN streams_recorded INTEGER NOT NULL DEFAULT 0");
  }
  if (from >= 1 && from <= 3) db.exec("ALTER TABLE runs ADD COLUMN driver TEXT");
  db.exec("PRAGMA user_version=" + std::to_string(kLedgerSchemaVersion));
}

}  // namespace

std::int64_t check_ledger(Database& db, const std::filesystem::path& path) {
  const std::int64_t version = check_not_foreign(db, path);
  if (version == 0) throw not_a_ledger(path, "an empty file (no tables)");
  return version;
}

void create_or_upgrade_ledger(Database& db, const std::filesystem::path& path) {
  check_not_foreign(db, path);
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  // IMMEDIATE: a second writer opening the same file waits, then sees the new version.
  db.exec("BEGIN IMMEDIATE");
  try {
    const std::int64_t version = check_not_foreign(db, path);
    if (version < kLedgerSchemaVersion) upgrade(db, version);
    db.exec("COMMIT");
  } catch (...) {
    try {
      db.exec("ROLLBACK");
    } catch (const SqliteError&) {
      // The failed statement ended the transaction already.
    }
    throw;
  }
}

}  // namespace baton
