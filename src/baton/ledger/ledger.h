// Ledger: the SQLite file (WAL mode) that every busy interval (of engines and of
// streams), fault event, run and poll of the GPU's per-process use goes into, so that exposure can
// be counted afterwards. Writes are queued and committed by a writer thread, off the engines' hot
// path, in one transaction at least every `commit_every` (default 1 s): a crash or kill -9 loses at
// most that much, and WAL keeps the file consistent. Consecutive bursts queued in one commit are
// merged into one interval where the analysis loses nothing (see interval_merge.h).
// A commit that fails (the file locked by another writer, a full disk, a damaged file) loses
// nothing at once: its rows are held and tried again with the next commit, and the warning
// callback hears of it at once (and again when writing recovers). Rows are given up only
// past kMaxHeldRows or once the run has ended; write_status() counts every one of them.
// Thread-safety: every member is thread-safe. The destructor commits what is queued and
// joins the writer thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "baton/ledger/ledger_rows.h"
#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"

namespace baton {

// What the writer thread managed to write, for warnings, /health, /metrics and exit codes.
struct LedgerWriteStatus {
  std::uint64_t rows_written = 0;    // committed (before merging consecutive bursts)
  std::uint64_t rows_held = 0;       // in a failed commit, to be tried again
  std::uint64_t rows_lost = 0;       // given up: never written
  std::uint64_t events_lost = 0;     // ... of them fault events (hangs, timeouts, ...)
  std::uint64_t failed_commits = 0;  // commits (and the run's end) that failed
  bool run_end_lost = false;         // end_run could not record the run's stop
  std::string last_error;            // the latest failure's message; empty: none yet
  bool failing() const { return rows_held > 0; }
  // The ledger misses something of this run.
  bool incomplete() const { return rows_lost > 0 || run_end_lost; }
  // A write failed during the run, whether or not a retry saved its rows: the run's exit
  // says so (the operator must learn of a failing disk even when nothing was lost).
  bool troubled() const { return failed_commits > 0 || incomplete(); }
};

// "N of M rows were never written[, nor the run's end] (K failed writes; the last: ...)".
std::string loss_summary(const LedgerWriteStatus& status);
// What the run's last message says of a troubled ledger: "is incomplete: <loss_summary>",
// or "had N failed writes, but every row was written on a retry (the last: ...)".
std::string trouble_summary(const LedgerWriteStatus& status);

// One line (no newline) about the writer's trouble, from the writer thread or end_run.
using LedgerWarning = std::function<void(const std::string& line)>;

// A warning that says where the ledger is: "baton: warning: ledger PATH: ..." on stderr.
LedgerWarning warn_on_stderr(const std::filesystem::path& path);

class Ledger {
 public:
  // Consecutive bursts of one engine and request closer than this are one interval.
  static constexpr double kMergeGapSeconds = 0.001;
  // Failed rows held for the next commit at most (tens of MB); the oldest go first.
  static constexpr std::size_t kMaxHeldRows = 200'000;

  // Opens or creates the ledger at `path` (an empty file is a new ledger), upgrading an
  // older schema in place. Throws LedgerFormatError when the file is not a baton ledger
  // (not SQLite, another program's database, a newer schema), SqliteError with the path
  // when it cannot be opened. `warn` hears of every failed write (default: stderr).
  explicit Ledger(const std::filesystem::path& path,
                  std::chrono::milliseconds commit_every = std::chrono::seconds(1),
                  LedgerWarning warn = {});
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Writes the run's row at once (its id is needed by every later row).
  std::int64_t begin_run(const RunStart& run);
  // Commits everything queued (a last try for the held rows: what still fails is lost),
  // then records how the run ended. A failure here is counted in write_status(), not thrown.
  void end_run(std::int64_t run_id, double stop, int exit_code);
  // A live experiment (ledger_experiment.cpp): its plan (JSON) when it starts, its verdict
  // (JSON) when it ends; its blocks, each a run: the block's row when the run begins, and
  // at its end the exposure the test counted and the run's stop (exit code 0). Written at
  // once, as begin_run is.
  std::int64_t begin_experiment(const std::string& name, double start,
                                const std::string& plan_json);
  void end_experiment(std::int64_t experiment_id, double stop, const std::string& verdict_json);
  void begin_block(const ExperimentBlockRow& row);
  void end_block(std::int64_t run_id, double stop, double exposure_hours);
  // Queue a row; never blocks on the database. Throws std::invalid_argument for an
  // interval that ends before it starts or has an unknown kind.
  void record(IntervalRow row);
  // Throws std::invalid_argument for a stream interval that ends before it starts.
  void record(StreamIntervalRow row);
  void record(EventRow row);
  // Throws std::invalid_argument for a poll that ends before it starts.
  void record(GpuPollRow row);
  // Blocks until every row queued before the call is committed or held after a failure.
  void flush();
  LedgerWriteStatus write_status() const;

 private:
  using Row = std::variant<IntervalRow, StreamIntervalRow, EventRow, GpuPollRow>;

  void write_loop(std::stop_token stop);
  // Writes `rows` in one transaction; on failure returns the error and rolls back.
  std::optional<std::string> commit(std::vector<Row>& rows);
  void insert_gpu_poll(const GpuPollRow& row);  // in commit()'s transaction
  // After a commit of `rows` (the held ones first) by the pass that answers the flushes up
  // to `serving`: counts them, keeps or drops the failed.
  void settle(std::vector<Row>& rows, const std::optional<std::string>& error,
              std::uint64_t serving);
  // flush(); with `last_try`, rows that fail in the pass that answers it are lost, not held.
  void wait_for_pass(bool last_try);

  const std::filesystem::path path_;
  const std::chrono::milliseconds commit_every_;
  const LedgerWarning warn_;
  Database db_;  // used by the writer thread, and by begin/end_run under db_mu_
  std::mutex db_mu_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::condition_variable_any committed_cv_;
  std::vector<Row> queue_;            // guarded by mu_
  std::uint64_t flush_tickets_ = 0;   // flushes ever asked for; guarded by mu_
  std::uint64_t flushed_ = 0;         // flushes answered by a writer pass; guarded by mu_
  std::uint64_t last_try_ticket_ = 0;  // end_run's flush (0: none yet); guarded by mu_
  LedgerWriteStatus status_;          // guarded by mu_
  std::vector<Row> held_;             // the writer thread's: failed rows, oldest first
  bool warned_drop_ = false;          // guarded by mu_: the warning of a drop said once
  std::jthread writer_;               // last: starts after the rest
};

}  // namespace baton
