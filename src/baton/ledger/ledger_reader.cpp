#include "baton/ledger/ledger_reader.h"

#include <algorithm>
#include <stdexcept>

#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"

namespace baton {
namespace {

constexpr const char* kRunFilter =
    " WHERE (?1 IS NULL OR run_id IN (SELECT id FROM runs WHERE policy = ?1))";

void bind_policy(Statement& s, const std::optional<std::string>& policy) {
  if (policy) {
    s.bind(1, std::string_view(*policy));
  } else {
    s.bind_null(1);
  }
}

std::optional<double> optional_double(const Statement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_double(column);
}

std::optional<std::int64_t> optional_int(const Statement& s, int column) {
  if (s.column_is_null(column)) return std::nullopt;
  return s.column_int(column);
}

// Runs recorded the driver from version 4 on.
std::string driver_column(std::int64_t version) {
  return version >= 4 ? "coalesce(driver, '')" : "''";
}

std::vector<LedgerRun> read_runs(Database& db, std::int64_t version,
                                 const std::optional<std::string>& policy) {
  // Before version 3 no run recorded its streams.
  const char* streams_recorded = version >= 3 ? "streams_recorded" : "0";
  Statement s(db, std::string("SELECT id, start, stop, backend, policy, exit_code, ") +
                      streams_recorded + ", " + driver_column(version) +
                      " FROM runs WHERE (?1 IS NULL OR policy = ?1) ORDER BY id");
  bind_policy(s, policy);
  std::vector<LedgerRun> runs;
  while (s.step()) {
    runs.push_back({s.column_int(0), s.column_double(1), optional_double(s, 2), s.column_text(3),
                    s.column_text(4), optional_int(s, 5), s.column_int(6) != 0, s.column_text(7)});
  }
  return runs;
}

// "concurrent, serialize/layer": the policies of the ledger's runs, for a message.
std::string policies_held(Database& db) {
  Statement s(db, "SELECT DISTINCT policy FROM runs ORDER BY policy");
  std::string held;
  while (s.step()) held += (held.empty() ? "" : ", ") + s.column_text(0);
  return held;
}

// A mistyped policy would select nothing and print an all-zero report as if measured.
void check_policy_held(Database& db, const std::filesystem::path& path,
                       const std::optional<std::string>& policy,
                       const std::vector<LedgerRun>& runs) {
  if (!policy || !runs.empty()) return;
  const std::string held = policies_held(db);
  throw std::invalid_argument("no run under policy '" + *policy + "' in " + path.string() +
                              (held.empty() ? "; it holds no runs" : "; it holds: " + held));
}

std::vector<BusyInterval> read_intervals(Database& db, std::int64_t version,
                                         const std::optional<std::string>& policy) {
  Statement s(db, std::string("SELECT engine, start, end, context_tokens, kind, ") +
                      "(SELECT coalesce(policy, '') FROM runs WHERE id = run_id), " +
                      "(SELECT coalesce(backend, '') FROM runs WHERE id = run_id), " + "(SELECT " +
                      driver_column(version) + " FROM runs WHERE id = run_id)" + " FROM intervals" +
                      kRunFilter + " ORDER BY start");
  bind_policy(s, policy);
  std::vector<BusyInterval> intervals;
  while (s.step()) {
    intervals.push_back({s.column_text(0), s.column_double(1), s.column_double(2),
                         optional_int(s, 3), s.column_text(4), s.column_text(5), s.column_text(6),
                         s.column_text(7)});
  }
  return intervals;
}

// Only when every run recorded its streams: a run that did not would pass for one whose
// streams were never busy.
std::optional<std::vector<StreamInterval>> read_stream_intervals(
    Database& db, const std::vector<LedgerRun>& runs, const std::optional<std::string>& policy) {
  const bool all_recorded =
      !runs.empty() &&
      std::all_of(runs.begin(), runs.end(), [](const auto& r) { return r.streams_recorded; });
  if (!all_recorded) return std::nullopt;
  Statement s(db, std::string("SELECT stream, start, end FROM stream_intervals") + kRunFilter +
                      " ORDER BY start");
  bind_policy(s, policy);
  std::vector<StreamInterval> intervals;
  while (s.step()) intervals.push_back({s.column_text(0), s.column_double(1), s.column_double(2)});
  return intervals;
}

std::vector<HangRecord> read_events(Database& db, const std::optional<std::string>& policy) {
  Statement s(db, std::string("SELECT time, coalesce(engine, ''), class FROM events") + kRunFilter +
                      " ORDER BY time");
  bind_policy(s, policy);
  std::vector<HangRecord> events;
  while (s.step()) events.push_back({s.column_double(0), s.column_text(1), s.column_text(2)});
  return events;
}

// The GPU polls (schema 5 on), each with its processes, in time order.
std::vector<GpuUsePoll> read_gpu_polls(Database& db, std::int64_t version,
                                       const std::optional<std::string>& policy) {
  if (version < 5) return {};
  Statement s(db,
              "SELECT p.id, p.run_id, p.start, p.end, p.host_pids, s.pid, coalesce(s.process, ''),"
              " s.own, s.sm_percent, s.mem_percent FROM gpu_polls p LEFT JOIN"
              " gpu_process_samples s ON s.poll_id = p.id"
              " WHERE (?1 IS NULL OR p.run_id IN (SELECT id FROM runs WHERE policy = ?1))"
              " ORDER BY p.start, p.id, s.rowid");
  bind_policy(s, policy);
  std::vector<GpuUsePoll> polls;
  std::int64_t last_id = 0;
  while (s.step()) {
    if (polls.empty() || s.column_int(0) != last_id) {
      last_id = s.column_int(0);
      polls.push_back({.run = s.column_int(1),
                       .start = s.column_double(2),
                       .end = s.column_double(3),
                       .host_pids = s.column_int(4) != 0,
                       .processes = {}});
    }
    if (s.column_is_null(5)) continue;  // a poll that found no process
    polls.back().processes.push_back({s.column_int(5), s.column_text(6), s.column_int(7) != 0,
                                      s.column_double(8), s.column_double(9)});
  }
  return polls;
}

}  // namespace

LedgerContents read_ledger(const std::filesystem::path& path,
                           const std::optional<std::string>& policy) {
  if (!std::filesystem::is_regular_file(path)) {
    throw std::invalid_argument("no ledger at " + path.string());
  }
  Database db(path, Database::Mode::read_only);
  const std::int64_t version = check_ledger(db, path);
  LedgerContents contents;
  contents.runs = read_runs(db, version, policy);
  check_policy_held(db, path, policy, contents.runs);
  contents.input.intervals = read_intervals(db, version, policy);
  contents.input.hangs = read_events(db, policy);
  contents.input.stream_intervals = read_stream_intervals(db, contents.runs, policy);
  contents.input.gpu_polls = read_gpu_polls(db, version, policy);
  return contents;
}

}  // namespace baton
