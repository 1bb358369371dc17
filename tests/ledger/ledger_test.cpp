#include "baton/ledger/ledger.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "temp_ledger_path.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::TempLedgerPath;

std::int64_t count(const fs::path& path, const char* table) {
  Database db(path);
  Statement s(db, std::string("SELECT count(*) FROM ") + table);
  s.step();
  return s.column_int(0);
}

IntervalRow interval(std::int64_t run, double start, double end, std::string engine = "decode-1") {
  return IntervalRow{.run_id = run,
                     .engine = std::move(engine),
                     .kind = "decode",
                     .start = start,
                     .end = end,
                     .context_tokens = 4096,
                     .request_id = 7};
}

TEST(Ledger, WritesRunsIntervalsAndEventsThatReadBack) {
  TempLedgerPath file;
  {
    Ledger ledger(file.path());
    const std::int64_t run = ledger.begin_run(
        {.start = 1'700'000'000.0, .version = "0.1.0", .backend = "cpu", .policy = "serialize"});
    ledger.record(interval(run, 1'700'000'001.0, 1'700'000'001.5));
    ledger.record(IntervalRow{.run_id = run,
                              .engine = "prefill-1",
                              .kind = "prefill",
                              .start = 1'700'000'002.0,
                              .end = 1'700'000'003.0,
                              .context_tokens = std::nullopt,
                              .request_id = std::nullopt});
    ledger.record(EventRow{.run_id = run,
                           .time = 1'700'000'004.0,
                           .error_class = "hang",
                           .engine = "decode-1",
                           .stream = "decode-1",
                           .in_flight = 2,
                           .detail = "stuck"});
    ledger.end_run(run, 1'700'000'010.0, 70);
    EXPECT_EQ(ledger.write_status().failed_commits, 0u);
  }
  Database db(file.path());
  Statement runs(db, "SELECT start, stop, version, backend, policy, exit_code FROM runs");
  ASSERT_TRUE(runs.step());
  EXPECT_DOUBLE_EQ(runs.column_double(0), 1'700'000'000.0);
  EXPECT_DOUBLE_EQ(runs.column_double(1), 1'700'000'010.0);
  EXPECT_EQ(runs.column_text(3), "cpu");
  EXPECT_EQ(runs.column_int(5), 70);
  Statement intervals(
      db, "SELECT engine, kind, start, end, context_tokens FROM intervals ORDER BY start");
  ASSERT_TRUE(intervals.step());
  EXPECT_EQ(intervals.column_text(0), "decode-1");
  EXPECT_DOUBLE_EQ(intervals.column_double(3), 1'700'000'001.5);
  EXPECT_EQ(intervals.column_int(4), 4096);
  ASSERT_TRUE(intervals.step());
  EXPECT_EQ(intervals.column_text(1), "prefill");
  EXPECT_TRUE(intervals.column_is_null(4));
  Statement events(db, "SELECT class, engine, in_flight, detail FROM events");
  ASSERT_TRUE(events.step());
  EXPECT_EQ(events.column_text(0), "hang");
  EXPECT_EQ(events.column_int(2), 2);
  Statement mode(db, "PRAGMA journal_mode");
  mode.step();
  EXPECT_EQ(mode.column_text(0), "wal");
}

TEST(Ledger, AnExperimentsPlanBlocksAndVerdictReadBack) {
  TempLedgerPath file;
  {
    Ledger ledger(file.path());
    const std::int64_t experiment = ledger.begin_experiment("ab", 100.0, R"({"arms": 2})");
    for (std::int64_t block = 0; block < 2; ++block) {
      const std::int64_t run = ledger.begin_run({.start = 100.0 + 10.0 * static_cast<double>(block),
                                                 .version = "t",
                                                 .backend = "cpu",
                                                 .policy = block ? "serialize" : "concurrent"});
      ledger.begin_block({.run_id = run,
                          .experiment_id = experiment,
                          .block = block,
                          .arm = 1 - block,
                          .arm_name = block ? "serialize" : "concurrent",
                          .switch_ms = 1.5});
      ledger.end_block(run, 110.0 + 10.0 * static_cast<double>(block), 0.25);
    }
    ledger.end_experiment(experiment, 120.0, R"({"decision": "b_better"})");
  }
  Database db(file.path());
  Statement blocks(
      db,
      "SELECT b.block, b.arm, b.arm_name, b.switch_ms, b.exposure_hours, r.policy,"
      " r.stop, r.exit_code, e.name, e.plan, e.stop, e.verdict FROM experiment_blocks b"
      " JOIN runs r ON r.id = b.run_id JOIN experiments e ON e.id = b.experiment_id"
      " ORDER BY b.block");
  for (std::int64_t block = 0; block < 2; ++block) {
    ASSERT_TRUE(blocks.step());
    EXPECT_EQ(blocks.column_int(0), block);
    EXPECT_EQ(blocks.column_int(1), 1 - block);
    EXPECT_EQ(blocks.column_text(2), block ? "serialize" : "concurrent");
    EXPECT_EQ(blocks.column_double(3), 1.5);
    EXPECT_EQ(blocks.column_double(4), 0.25);
    EXPECT_EQ(blocks.column_text(5), blocks.column_text(2));
    EXPECT_EQ(blocks.column_double(6), 110.0 + 10.0 * static_cast<double>(block));
    EXPECT_EQ(blocks.column_int(7), 0);
    EXPECT_EQ(blocks.column_text(8), "ab");
    EXPECT_EQ(blocks.column_text(9), R"({"arms": 2})");
    EXPECT_EQ(blocks.column_double(10), 120.0);
    EXPECT_EQ(blocks.column_text(11), R"({"decision": "b_better"})");
  }
  EXPECT_FALSE(blocks.step());
}

TEST(Ledger, RowsFromManyThreadsAreAllCommitted) {
  TempLedgerPath file;
  Ledger ledger(file.path(), 20ms);
  const std::int64_t run =
      ledger.begin_run({.start = 0.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&ledger, run, t] {
      for (int i = 0; i < 500; ++i) {
        ledger.record(interval(run, i, i + 0.5, "engine-" + std::to_string(t)));
      }
    });
  }
  for (auto& w : writers) w.join();
  ledger.flush();
  EXPECT_EQ(count(file.path(), "intervals"), 2000);
}

TEST(Ledger, BadIntervalsAreRefusedAtOnce) {
  TempLedgerPath file;
  Ledger ledger(file.path());
  EXPECT_THROW(ledger.record(interval(0, 2.0, 1.0)), std::invalid_argument);
  IntervalRow wrong_kind = interval(0, 1.0, 2.0);
  wrong_kind.kind = "train";
  EXPECT_THROW(ledger.record(wrong_kind), std::invalid_argument);
}

TEST(Ledger, ReopeningKeepsWhatWasWritten) {
  TempLedgerPath file;
  for (int round = 0; round < 2; ++round) {
    Ledger ledger(file.path());
    const std::int64_t run = ledger.begin_run(
        {.start = double(round), .version = "test", .backend = "cpu", .policy = "serialize"});
    ledger.record(interval(run, round, round + 1.0));
  }
  EXPECT_EQ(count(file.path(), "runs"), 2);
  EXPECT_EQ(count(file.path(), "intervals"), 2);
}

TEST(Ledger, ANewerSchemaIsRefusedWithThePath) {
  TempLedgerPath file;
  {
    Database db(file.path());
    db.exec("PRAGMA user_version=99");
  }
  try {
    Ledger ledger(file.path());
    FAIL() << "a newer schema was accepted";
  } catch (const LedgerFormatError& e) {
    EXPECT_EQ(std::string(e.what()), file.path().string() +
                                         " was written by a newer baton (ledger schema version "
                                         "99; this baton knows up to " +
                                         std::to_string(kLedgerSchemaVersion) + ")");
  }
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Ledger, AFileThatIsNotSqliteIsRefusedAndLeftAsItWas) {
  TempLedgerPath file;
  const std::string text = "engine,start,end\ndecode,1,2\n";
  std::ofstream(file.path(), std::ios::binary) << text;
  try {
    Ledger ledger(file.path());
    FAIL() << "a text file was taken for a ledger";
  } catch (const LedgerFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              file.path().string() + " is not a baton ledger: not an SQLite database");
  }
  EXPECT_EQ(text_of(file.path()), text);
}

TEST(Ledger, AnotherProgramsDatabaseIsRefusedAndGainsNoTable) {
  TempLedgerPath file;
  {
    Database db(file.path());
    db.exec("CREATE TABLE notes (x); INSERT INTO notes VALUES (1);");
  }
  try {
    Ledger ledger(file.path());
    FAIL() << "another program's database was taken for a ledger";
  } catch (const LedgerFormatError& e) {
    EXPECT_EQ(std::string(e.what()), file.path().string() +
                                         " is not a baton ledger: an SQLite database without a "
                                         "runs table");
  }
  EXPECT_EQ(count(file.path(), "sqlite_master"), 1);  // only its own table
}

TEST(Ledger, AnEmptyFileBecomesALedger) {
  TempLedgerPath file;
  std::ofstream(file.path()).close();  // what mktemp leaves
  { Ledger ledger(file.path()); }
  EXPECT_EQ(count(file.path(), "runs"), 0);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(Ledger, KillNineLosesAtMostTheLastCommitInterval) {
  TempLedgerPath file;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Records one interval a millisecond, stamped with the time it was recorded, until
    // it is killed. Commits every 100 ms.
    Ledger ledger(file.path(), 100ms);
    const std::int64_t run = ledger.begin_run(
        {.start = unix_now(), .version = "test", .backend = "cpu", .policy = "concurrent"});
    for (;;) {
      const double now = unix_now();
      ledger.record(interval(run, now, now + 0.001));
      std::this_thread::sleep_for(1ms);
    }
  }
  std::this_thread::sleep_for(1s);
  const double killed_at = unix_now();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);

  Database db(file.path());
  Statement check(db, "PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.column_text(0), "ok");
  // Back-to-back intervals of one request merge; `bursts` still counts every one.
  Statement latest(db, "SELECT sum(bursts), max(end) - 0.001 FROM intervals");
  ASSERT_TRUE(latest.step());
  EXPECT_GT(latest.column_int(0), 100);
  // Lost: only what was recorded in the last commit interval (100 ms), plus the time a
  // commit takes on a busy machine.
  EXPECT_GE(latest.column_double(1), killed_at - 0.1 - 0.4);
}

}  // namespace
}  // namespace baton
