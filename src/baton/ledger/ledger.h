// Ledger: the SQLite file (WAL mode) that every busy interval (of engines and of
// streams), fault event, run and poll of the GPU's per-process use goes into, so that exposure can
// be counted afterwards. Writes are queued and committed by a writer thread, off the engines' hot
// path, in one transaction at least every `commit_every` (default 1 s): a crash or kill -9 loses at
// most that much, and WAL keeps the file consistent. Consecutive bursts queued in one commit are
// merged into one interval where the analysis loses nothing (see interval_merge.h). Thread-safety:
// every member is thread-safe. The destructor commits what is queued and joins the writer thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "baton/ledger/ledger_rows.h"
#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"

namespace baton {

class Ledger {
 public:
  // Consecutive bursts of one engine and request closer than this are one interval.
  static constexpr double kMergeGapSeconds = 0.001;

  // Opens or creates the ledger at `path` (an empty file is a new ledger), upgrading an
  // older schema in place. Throws LedgerFormatError when the file is not a baton ledger
  // (not SQLite, another program's database, a newer schema), SqliteError with the path
  // when it cannot be opened.
  explicit Ledger(const std::filesystem::path& path,
                  std::chrono::milliseconds commit_every = std::chrono::seconds(1));
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Writes the run's row at once (its id is needed by every later row).
  std::int64_t begin_run(const RunStart& run);
  // Commits everything queued, then records how the run ended.
  void end_run(std::int64_t run_id, double stop, int exit_code);
  // Queue a row; never blocks on the database. Throws std::invalid_argument for an
  // interval that ends before it starts or has an unknown kind.
  void record(IntervalRow row);
  // Throws std::invalid_argument for a stream interval that ends before it starts.
  void record(StreamIntervalRow row);
  void record(EventRow row);
  // Throws std::invalid_argument for a poll that ends before it starts.
  void record(GpuPollRow row);
  // Blocks until every row queued before the call is committed.
  void flush();
  // The first error the writer thread met, if any (the rows it could not write are lost).
  std::optional<std::string> writer_error() const;

 private:
  using Row = std::variant<IntervalRow, StreamIntervalRow, EventRow, GpuPollRow>;

  void write_loop(std::stop_token stop);
  void commit(std::vector<Row>& rows);
  void insert_gpu_poll(const GpuPollRow& row);  // in commit()'s transaction

  const std::chrono::milliseconds commit_every_;
  Database db_;  // used by the writer thread, and by begin/end_run under db_mu_
  std::mutex db_mu_;

  mutable std::mutex mu_;
  std::condition_variable_any wake_;
  std::condition_variable_any committed_cv_;
  std::vector<Row> queue_;            // guarded by mu_
  std::uint64_t queued_ = 0;          // rows ever queued; guarded by mu_
  std::uint64_t committed_ = 0;       // rows ever committed or dropped; guarded by mu_
  bool flush_requested_ = false;      // guarded by mu_
  std::optional<std::string> error_;  // guarded by mu_
  std::jthread writer_;               // last: starts after the rest
};

}  // namespace baton
