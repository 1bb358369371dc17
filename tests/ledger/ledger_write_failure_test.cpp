// A ledger that stops taking writes mid-run (here: a table renamed away by another
// connection, as a damaged file or a full disk fails every insert): each failed write is a
// warning at once, its rows are held and written once the ledger takes writes again, and
// what still fails at the run's end is counted as lost, never dropped in silence.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "baton/ledger/ledger.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::TempLedgerPath;

// The warnings a ledger gave, from its writer thread.
class Warnings {
 public:
  LedgerWarning sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu_);
      lines_.push_back(line);
    };
  }
  std::string all() {
    std::lock_guard lock(mu_);
    std::string text;
    for (const std::string& line : lines_) text += line + "\n";
    return text;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

void rename_table(const std::filesystem::path& path, const std::string& from,
                  const std::string& to) {
  Database db(path);  // another connection, as another process would be
  db.exec("ALTER TABLE " + from + " RENAME TO " + to);
}

std::int64_t rows_in(const std::filesystem::path& path, const std::string& table) {
  Database db(path, Database::Mode::read_only);
  Statement s(db, "SELECT count(*) FROM " + table);
  s.step();
  return s.column_int(0);
}

EventRow hang(std::int64_t run, double time) {
  return EventRow{.run_id = run,
                  .time = time,
                  .error_class = "hang",
                  .engine = "decode-1",
                  .stream = "decode-1",
                  .in_flight = 1,
                  .detail = "stuck"};
}

TEST(LedgerWriteFailure, FailedRowsAreHeldWarnedAndWrittenWhenTheLedgerRecovers) {
  TempLedgerPath file;
  Warnings warnings;
  Ledger ledger(file.path(), std::chrono::hours(1), warnings.sink());
  const std::int64_t run = ledger.begin_run({.start = 1.0, .version = "test"});
  rename_table(file.path(), "events", "events_away");
  ledger.record(hang(run, 2.0));
  ledger.record(hang(run, 3.0));
  ledger.flush();
  LedgerWriteStatus status = ledger.write_status();
  EXPECT_EQ(status.rows_held, 2u);
  EXPECT_EQ(status.rows_lost, 0u);
  EXPECT_EQ(status.rows_written, 0u);
  EXPECT_GE(status.failed_commits, 1u);
  EXPECT_TRUE(status.failing());
  EXPECT_FALSE(status.incomplete());
  EXPECT_NE(status.last_error.find("events"), std::string::npos) << status.last_error;
  EXPECT_NE(warnings.all().find("cannot write 2 rows"), std::string::npos) << warnings.all();
  EXPECT_NE(warnings.all().find("holding them to try again"), std::string::npos);

  rename_table(file.path(), "events_away", "events");
  ledger.record(hang(run, 4.0));
  ledger.flush();
  status = ledger.write_status();
  EXPECT_EQ(status.rows_held, 0u);
  EXPECT_EQ(status.rows_written, 3u);
  EXPECT_FALSE(status.failing());
  EXPECT_NE(warnings.all().find("writing again: the 2 rows held are in"), std::string::npos)
      << warnings.all();
  ledger.end_run(run, 5.0, 0);
  status = ledger.write_status();
  EXPECT_FALSE(status.incomplete());
  EXPECT_TRUE(status.troubled());  // nothing lost, yet the run's exit still reports the failure
  EXPECT_NE(trouble_summary(status).find("but every row was written on a retry"), std::string::npos)
      << trouble_summary(status);
  EXPECT_EQ(rows_in(file.path(), "events"), 3);
}

TEST(LedgerWriteFailure, RowsThatStillFailAtTheRunsEndAreCountedAsLost) {
  TempLedgerPath file;
  Warnings warnings;
  Ledger ledger(file.path(), std::chrono::hours(1), warnings.sink());
  const std::int64_t run = ledger.begin_run({.start = 1.0, .version = "test"});
  ledger.record(hang(run, 2.0));
  ledger.flush();  // written before the damage
  rename_table(file.path(), "events", "events_away");
  rename_table(file.path(), "runs", "runs_away");
  for (int i = 0; i < 3; ++i) ledger.record(hang(run, 3.0 + i));
  ledger.end_run(run, 9.0, 0);  // no throw: counted
  const LedgerWriteStatus status = ledger.write_status();
  EXPECT_EQ(status.rows_written, 1u);
  EXPECT_EQ(status.rows_held, 0u);
  EXPECT_EQ(status.rows_lost, 3u);
  EXPECT_EQ(status.events_lost, 3u);  // the hangs: what the analysis counts
  EXPECT_TRUE(status.run_end_lost);
  EXPECT_TRUE(status.incomplete());
  EXPECT_NE(warnings.all().find("cannot write 3 rows"), std::string::npos) << warnings.all();
  EXPECT_NE(warnings.all().find("they are lost"), std::string::npos) << warnings.all();
  EXPECT_NE(warnings.all().find("cannot record the end of run"), std::string::npos);
  const std::string summary = loss_summary(status);
  EXPECT_NE(
      summary.find("3 of 4 rows were never written (3 of them fault events), nor the run's end"),
      std::string::npos)
      << summary;
}

}  // namespace
}  // namespace baton
