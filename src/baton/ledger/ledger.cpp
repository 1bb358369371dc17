#include "baton/ledger/ledger.h"

#include "baton/ledger/interval_merge.h"
#include "baton/ledger/ledger_schema.h"

#include <algorithm>
#include <iostream>
#include <iterator>
#include <stdexcept>

namespace baton {
namespace {

void bind_optional(Statement& s, int index, const std::optional<std::int64_t>& value) {
  if (value) {
    s.bind(index, *value);
  } else {
    s.bind_null(index);
  }
}

// The default location (~/.local/state/baton/) may not exist yet.
const std::filesystem::path& with_parent_directory(const std::filesystem::path& path) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  return path;
}

std::string rows_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " row" : " rows");
}

}  // namespace

std::string loss_summary(const LedgerWriteStatus& s) {
  const std::uint64_t all = s.rows_written + s.rows_held + s.rows_lost;
  return std::to_string(s.rows_lost) + " of " + rows_text(all) + " were never written" +
         (s.events_lost > 0 ? " (" + std::to_string(s.events_lost) + " of them fault events)"
                            : "") +
         (s.run_end_lost ? ", nor the run's end" : "") + " (" + std::to_string(s.failed_commits) +
         " failed writes; the last: " + s.last_error + ")";
}

std::string trouble_summary(const LedgerWriteStatus& s) {
  if (s.incomplete()) return "is incomplete: " + loss_summary(s);
  return "had " + std::to_string(s.failed_commits) +
         " failed writes, but every row was written on a retry (the last: " + s.last_error + ")";
}

LedgerWarning warn_on_stderr(const std::filesystem::path& path) {
  return [path](const std::string& line) {
    std::cerr << "baton: warning: ledger " + path.string() + ": " + line + "\n" << std::flush;
  };
}

Ledger::Ledger(const std::filesystem::path& path, std::chrono::milliseconds commit_every,
               LedgerWarning warn)
    : path_(path),
      commit_every_(commit_every),
      warn_(warn ? std::move(warn) : warn_on_stderr(path)),
      db_(with_parent_directory(path)) {
  create_or_upgrade_ledger(db_, path);
  writer_ = std::jthread([this](std::stop_token stop) { write_loop(stop); });
}

Ledger::~Ledger() {
  writer_.request_stop();
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

std::int64_t Ledger::begin_run(const RunStart& run) {
  std::lock_guard lock(db_mu_);
  Statement insert(db_,
                   "INSERT INTO runs (start, version, backend, policy, streams_recorded, driver)"
                   " VALUES (?, ?, ?, ?, ?, nullif(?, ''))");
  insert.bind(1, run.start).bind(2, run.version).bind(3, run.backend).bind(4, run.policy);
  insert.bind(5, std::int64_t{run.streams_recorded}).bind(6, run.driver).run();
  return db_.last_insert_rowid();
}

void Ledger::end_run(std::int64_t run_id, double stop, int exit_code) {
  wait_for_pass(/*last_try=*/true);
  try {
    std::lock_guard lock(db_mu_);
    Statement update(db_, "UPDATE runs SET stop = ?, exit_code = ? WHERE id = ?");
    update.bind(1, stop).bind(2, std::int64_t{exit_code}).bind(3, run_id).run();
  } catch (const SqliteError& error) {
    {
      std::lock_guard lock(mu_);
      status_.run_end_lost = true;
      ++status_.failed_commits;
      status_.last_error = error.what();
    }
    warn_("cannot record the end of run " + std::to_string(run_id) + " (" + error.what() + ")");
  }
}

void Ledger::record(IntervalRow row) {
  // Checked here, where the caller can hear of it, not in the writer thread.
  if (!(row.end >= row.start) ||
      (row.kind != "prefill" && row.kind != "decode" && row.kind != "embed")) {
    throw std::invalid_argument("[ledger] bad interval of engine '" + row.engine + "': kind '" +
                                row.kind + "', start " + std::to_string(row.start) + ", end " +
                                std::to_string(row.end));
  }
  std::lock_guard lock(mu_);
  queue_.emplace_back(std::move(row));
}

void Ledger::record(StreamIntervalRow row) {
  if (!(row.end >= row.start)) {
    throw std::invalid_argument("[ledger] bad interval of stream '" + row.stream + "': start " +
                                std::to_string(row.start) + ", end " + std::to_string(row.end));
  }
  std::lock_guard lock(mu_);
  queue_.emplace_back(std::move(row));
}

void Ledger::record(GpuPollRow row) {
  if (!(row.poll.end >= row.poll.start)) {
    throw std::invalid_argument("[ledger] bad GPU poll: start " + std::to_string(row.poll.start) +
                                ", end " + std::to_string(row.poll.end));
  }
  std::lock_guard lock(mu_);
  queue_.emplace_back(std::move(row));
}

void Ledger::record(EventRow row) {
  std::lock_guard lock(mu_);
  queue_.emplace_back(std::move(row));
}

void Ledger::flush() { wait_for_pass(/*last_try=*/false); }

void Ledger::wait_for_pass(bool last_try) {
  std::unique_lock lock(mu_);
  const std::uint64_t ticket = ++flush_tickets_;
  if (last_try) last_try_ticket_ = ticket;
  wake_.notify_all();
  committed_cv_.wait(lock, [&] { return flushed_ >= ticket || !writer_.joinable(); });
}

LedgerWriteStatus Ledger::write_status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void Ledger::write_loop(std::stop_token stop) {
  for (;;) {
    std::vector<Row> rows;
    std::uint64_t serving = 0;  // the flushes this pass answers: rows queued before them
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, stop, commit_every_, [this] { return flush_tickets_ > flushed_; });
      serving = flush_tickets_;
      rows.swap(queue_);
    }
    if (!held_.empty()) {  // older: first, so that consecutive bursts still merge
      rows.insert(rows.begin(), std::make_move_iterator(held_.begin()),
                  std::make_move_iterator(held_.end()));
      held_.clear();
    }
    if (!rows.empty()) settle(rows, commit(rows), serving);
    {
      std::lock_guard lock(mu_);
      flushed_ = serving;
    }
    committed_cv_.notify_all();
    if (stop.stop_requested()) {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;  // what was queued before the stop is written too
    }
  }
}

void Ledger::settle(std::vector<Row>& rows, const std::optional<std::string>& error,
                    std::uint64_t serving) {
  std::string warning;
  {
    std::lock_guard lock(mu_);
    if (!error) {
      if (status_.rows_held > 0) {
        warning = "writing again: the " + rows_text(status_.rows_held) + " held are in";
      }
      status_.rows_written += rows.size();
      status_.rows_held = 0;
      warned_drop_ = false;
    } else {
      ++status_.failed_commits;
      status_.last_error = *error;
      const bool first = status_.rows_held == 0;
      // The run's last try (or the ledger closes): there is no later commit to wait for.
      const bool give_up = (last_try_ticket_ != 0 && serving >= last_try_ticket_) ||
                           writer_.get_stop_token().stop_requested();
      const std::size_t drop =
          give_up ? rows.size() : rows.size() - std::min(rows.size(), kMaxHeldRows);
      status_.rows_lost += drop;
      status_.events_lost += static_cast<std::uint64_t>(
          std::count_if(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(drop),
                        [](const Row& row) { return std::holds_alternative<EventRow>(row); }));
      held_.assign(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(drop)),
                   std::make_move_iterator(rows.end()));
      status_.rows_held = held_.size();
      if (give_up) {
        warning = "cannot write " + rows_text(drop) + " (" + *error + "); they are lost";
      } else if (first) {
        warning = "cannot write " + rows_text(rows.size()) + " (" + *error +
                  "); holding them to try again with every commit";
      } else if (drop > 0 && !warned_drop_) {
        warned_drop_ = true;
        warning = "still cannot write (" + *error + "); dropped the oldest " + rows_text(drop) +
                  " of those held (at most " + std::to_string(kMaxHeldRows) + " are kept)";
      }
    }
  }
  if (!warning.empty()) warn_(warning);
}

std::optional<std::string> Ledger::commit(std::vector<Row>& rows) {
  std::lock_guard db_lock(db_mu_);
  try {
    db_.exec("BEGIN");
    Statement interval(db_,
                       "INSERT INTO intervals (run_id, engine, kind, start, end, context_tokens,"
                       " request_id, bursts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    Statement stream(
        db_, "INSERT INTO stream_intervals (run_id, stream, start, end) VALUES (?, ?, ?, ?)");
    Statement event(db_,
                    "INSERT INTO events (run_id, time, class, engine, stream, in_flight, detail)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)");
    std::vector<IntervalRow> intervals;  // copies: the rows stay whole for a retry
    for (const Row& row : rows) {
      if (const auto* i = std::get_if<IntervalRow>(&row)) {
        intervals.push_back(*i);
      } else if (const auto* s = std::get_if<StreamIntervalRow>(&row)) {
        // Merged already where that is safe (stream_recorder.h).
        stream.bind(1, s->run_id).bind(2, s->stream).bind(3, s->start).bind(4, s->end).run();
      } else if (const auto* e = std::get_if<EventRow>(&row)) {
        event.bind(1, e->run_id).bind(2, e->time).bind(3, e->error_class).bind(4, e->engine);
        event.bind(5, e->stream).bind(6, e->in_flight).bind(7, e->detail);
        event.run();
      } else if (const auto* g = std::get_if<GpuPollRow>(&row)) {
        insert_gpu_poll(*g);
      }
    }
    for (const IntervalRow& i : merge_consecutive(std::move(intervals), kMergeGapSeconds)) {
      interval.bind(1, i.run_id).bind(2, i.engine).bind(3, i.kind).bind(4, i.start);
      interval.bind(5, i.end);
      bind_optional(interval, 6, i.context_tokens);
      bind_optional(interval, 7, i.request_id);
      interval.bind(8, i.bursts);
      interval.run();
    }
    db_.exec("COMMIT");
    return std::nullopt;
  } catch (const SqliteError& error) {
    try {
      db_.exec("ROLLBACK");
    } catch (const SqliteError&) {
      // No transaction was open: nothing to roll back.
    }
    return error.what();
  }
}

void Ledger::insert_gpu_poll(const GpuPollRow& row) {
  Statement poll(db_, "INSERT INTO gpu_polls (run_id, start, end, host_pids) VALUES (?, ?, ?, ?)");
  poll.bind(1, row.run_id).bind(2, row.poll.start).bind(3, row.poll.end);
  poll.bind(4, std::int64_t{row.poll.host_pids}).run();
  if (row.poll.processes.empty()) return;
  const std::int64_t poll_id = db_.last_insert_rowid();
  Statement sample(db_,
                   "INSERT INTO gpu_process_samples (poll_id, pid, process, own, sm_percent,"
                   " mem_percent) VALUES (?, ?, ?, ?, ?, ?)");
  for (const GpuProcessUse& p : row.poll.processes) {
    sample.bind(1, poll_id).bind(2, std::int64_t{p.pid});
    if (p.process) {
      sample.bind(3, *p.process);
    } else {
      sample.bind_null(3);
    }
    sample.bind(4, std::int64_t{p.own}).bind(5, p.sm_percent).bind(6, p.mem_percent).run();
  }
}

}  // namespace baton
