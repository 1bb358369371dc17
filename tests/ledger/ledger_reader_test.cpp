#include "baton/ledger/ledger_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>

#include "baton/ledger/ledger.h"
#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

using testing::TempLedgerPath;

void write_two_runs(const std::filesystem::path& path) {
  Ledger ledger(path);
  const auto a = ledger.begin_run(
      {.start = 1000.0, .version = "0.1.0", .backend = "cpu", .policy = "concurrent"});
  ledger.record(IntervalRow{.run_id = a,
                            .engine = "decode",
                            .kind = "decode",
                            .start = 1001.0,
                            .end = 1002.0,
                            .context_tokens = 4096,
                            .request_id = 1});
  ledger.record(IntervalRow{.run_id = a,
                            .engine = "decode",
                            .kind = "decode",
                            .start = 1002.0005,
                            .end = 1003.0,
                            .context_tokens = 4096,
                            .request_id = 1});  // merges
  ledger.record(IntervalRow{.run_id = a,
                            .engine = "prefill",
                            .kind = "prefill",
                            .start = 1001.5,
                            .end = 1004.0,
                            .context_tokens = std::nullopt,
                            .request_id = 2});
  ledger.record(EventRow{.run_id = a,
                         .time = 1002.5,
                         .error_class = "hang",
                         .engine = "decode",
                         .stream = "decode",
                         .in_flight = 3,
                         .detail = "stuck"});
  ledger.record(EventRow{.run_id = a,
                         .time = 1003.5,
                         .error_class = "hang",
                         .engine = "",
                         .stream = "",
                         .in_flight = 0,
                         .detail = "nobody to blame"});
  ledger.end_run(a, 1005.0, 0);
  const auto b = ledger.begin_run(
      {.start = 2000.0, .version = "0.1.0", .backend = "cpu", .policy = "serialize/layer"});
  ledger.record(IntervalRow{.run_id = b,
                            .engine = "decode",
                            .kind = "decode",
                            .start = 2001.0,
                            .end = 2002.0,
                            .context_tokens = 4096,
                            .request_id = 1});
  ledger.end_run(b, 2003.0, 0);
}

TEST(LedgerReader, ReadsEveryRunOrOnlyThoseOfOnePolicy) {
  TempLedgerPath file;
  write_two_runs(file.path());

  const LedgerContents all = read_ledger(file.path());
  ASSERT_EQ(all.runs.size(), 2u);
  EXPECT_EQ(all.runs[1].policy, "serialize/layer");
  EXPECT_EQ(all.runs[0].exit_code, 0);
  ASSERT_EQ(all.input.intervals.size(), 3u);  // the two decode bursts of run 1 merged
  EXPECT_EQ(all.input.intervals[0].engine, "decode");
  EXPECT_EQ(all.input.intervals[0].end, 1003.0);
  EXPECT_EQ(all.input.intervals[0].kind, "decode");
  EXPECT_EQ(all.input.intervals[1].context_tokens, std::nullopt);
  ASSERT_EQ(all.input.hangs.size(), 2u);
  EXPECT_EQ(all.input.hangs[1].engine, "");

  const LedgerContents serialized = read_ledger(file.path(), "serialize/layer");
  ASSERT_EQ(serialized.runs.size(), 1u);
  EXPECT_EQ(serialized.input.intervals.size(), 1u);
  EXPECT_TRUE(serialized.input.hangs.empty());
}

TEST(LedgerReader, APolicyNoRunHasIsAUsageErrorNamingThoseItHolds) {
  TempLedgerPath file;
  write_two_runs(file.path());
  try {
    read_ledger(file.path(), "serialize");
    FAIL() << "a policy no run has was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "no run under policy 'serialize' in " + file.path().string() +
                                         "; it holds: concurrent, serialize/layer");
  }
  TempLedgerPath empty;
  { Ledger ledger(empty.path()); }
  try {
    read_ledger(empty.path(), "concurrent");
    FAIL() << "a policy no run has was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("; it holds no runs"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(read_ledger(empty.path()).runs.empty());  // without --policy: nothing to say
}

TEST(LedgerReader, MissingFileIsAUsageError) {
  EXPECT_THROW(read_ledger("/nonexistent/baton/ledger.db"), std::invalid_argument);
}

// The message that reading `path` gives; fails the test if it reads.
std::string refusal(const std::filesystem::path& path) {
  try {
    read_ledger(path);
  } catch (const LedgerFormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " was read as a ledger";
  return {};
}

TEST(LedgerReader, SomethingElseIsNotALedger) {
  TempLedgerPath other;
  {
    Database db(other.path());
    db.exec("CREATE TABLE t (x)");
  }
  EXPECT_EQ(refusal(other.path()), other.path().string() +
                                       " is not a baton ledger: an SQLite database without a runs "
                                       "table");
  TempLedgerPath text;
  std::ofstream(text.path()) << "time,engine\n";
  EXPECT_EQ(refusal(text.path()),
            text.path().string() + " is not a baton ledger: not an SQLite database");
  TempLedgerPath empty;
  std::ofstream(empty.path()).close();
  EXPECT_EQ(refusal(empty.path()),
            empty.path().string() + " is not a baton ledger: an empty file (no tables)");
  TempLedgerPath versioned;
  {
    Database db(versioned.path());
    db.exec("CREATE TABLE runs (x); PRAGMA user_version=2;");
  }
  EXPECT_EQ(refusal(versioned.path()), versioned.path().string() +
                                           " is not a baton ledger: schema version 2 but no "
                                           "table intervals, events");
  // A LedgerFormatError is the user's input: the CLI exits with 2.
  EXPECT_THROW(read_ledger(other.path()), std::invalid_argument);
}

TEST(LedgerReader, AVersionOneLedgerGainsTheBurstsColumn) {
  TempLedgerPath file;
  {
    Database db(file.path());
    db.exec(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, start REAL NOT NULL, stop REAL,"
        " version TEXT NOT NULL, backend TEXT NOT NULL, policy TEXT NOT NULL, exit_code INTEGER);"
        "CREATE TABLE intervals (id INTEGER PRIMARY KEY, run_id INTEGER, engine TEXT NOT NULL,"
        " kind TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, context_tokens INTEGER,"
        " request_id INTEGER);"
        "CREATE TABLE events (id INTEGER PRIMARY KEY, run_id INTEGER, time REAL NOT NULL,"
        " class TEXT NOT NULL, engine TEXT, stream TEXT, in_flight INTEGER, detail TEXT);"
        "INSERT INTO runs VALUES (1, 1.0, 2.0, '0.1.0', 'cpu', 'concurrent', 0);"
        "INSERT INTO intervals VALUES (1, 1, 'd', 'decode', 1.0, 1.5, 10, 1);"
        "PRAGMA user_version=1;");
  }
  EXPECT_EQ(read_ledger(file.path()).input.intervals.size(), 1u);  // v1 reads as it is
  { Ledger upgraded(file.path()); }
  Database db(file.path());
  Statement s(db, "SELECT bursts FROM intervals");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_int(0), 1);
}

// A ledger as baton 0.x wrote it with schema version 2: no stream intervals, no
// streams_recorded.
void write_version_two(const std::filesystem::path& path) {
  Database db(path);
  db.exec(
      "CREATE TABLE runs (id INTEGER PRIMARY KEY, start REAL NOT NULL, stop REAL,"
      " version TEXT NOT NULL, backend TEXT NOT NULL, policy TEXT NOT NULL, exit_code INTEGER);"
      "CREATE TABLE intervals (id INTEGER PRIMARY KEY, run_id INTEGER, engine TEXT NOT NULL,"
      " kind TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, context_tokens INTEGER,"
      " request_id INTEGER, bursts INTEGER NOT NULL DEFAULT 1);"
      "CREATE TABLE events (id INTEGER PRIMARY KEY, run_id INTEGER, time REAL NOT NULL,"
      " class TEXT NOT NULL, engine TEXT, stream TEXT, in_flight INTEGER, detail TEXT);"
      "INSERT INTO runs VALUES (1, 1.0, 2.0, '0.1.0', 'cpu', 'serialize/layer', 0);"
      "INSERT INTO intervals VALUES (1, 1, 'd', 'decode', 1.0, 1.5, 10, 1, 1);"
      "PRAGMA user_version=2;");
}

TEST(LedgerReader, StreamIntervalsOfRunsThatRecordedThem) {
  TempLedgerPath file;
  {
    Ledger ledger(file.path());
    const auto run = ledger.begin_run({.start = 1000.0,
                                       .version = "test",
                                       .backend = "cpu",
                                       .policy = "serialize/layer",
                                       .streams_recorded = true});
    ledger.record(IntervalRow{.run_id = run,
                              .engine = "decode",
                              .kind = "decode",
                              .start = 1001.0,
                              .end = 1003.0,
                              .context_tokens = 64,
                              .request_id = 1});
    ledger.record(
        StreamIntervalRow{.run_id = run, .stream = "decode", .start = 1002.0, .end = 1003.0});
    ledger.record(
        StreamIntervalRow{.run_id = run, .stream = "prefill", .start = 1003.0, .end = 1004.0});
    ledger.end_run(run, 1005.0, 0);
  }
  const LedgerContents contents = read_ledger(file.path());
  ASSERT_TRUE(contents.runs[0].streams_recorded);
  ASSERT_TRUE(contents.input.stream_intervals.has_value());
  ASSERT_EQ(contents.input.stream_intervals->size(), 2u);
  EXPECT_EQ((*contents.input.stream_intervals)[1].stream, "prefill");
  EXPECT_EQ((*contents.input.stream_intervals)[1].end, 1004.0);
}

// An old ledger simply has no stream intervals: unknown, never zero.
TEST(LedgerReader, AVersionTwoLedgerHasNoStreamIntervalsAndKeepsNoneWhenUpgraded) {
  TempLedgerPath file;
  write_version_two(file.path());
  const LedgerContents old = read_ledger(file.path());
  EXPECT_EQ(old.input.intervals.size(), 1u);
  EXPECT_FALSE(old.runs[0].streams_recorded);
  EXPECT_FALSE(old.input.stream_intervals.has_value());

  {
    Ledger upgraded(file.path());  // schema 3: a new run records its streams
    const auto run = upgraded.begin_run({.start = 3000.0,
                                         .version = "test",
                                         .backend = "cpu",
                                         .policy = "concurrent",
                                         .streams_recorded = true});
    upgraded.record(
        StreamIntervalRow{.run_id = run, .stream = "decode", .start = 3001.0, .end = 3002.0});
    upgraded.end_run(run, 3003.0, 0);
  }
  Database db(file.path());
  EXPECT_EQ(db.user_version(), kLedgerSchemaVersion);
  const LedgerContents mixed = read_ledger(file.path());
  EXPECT_FALSE(mixed.runs[0].streams_recorded);            // the old run still says it has none
  EXPECT_FALSE(mixed.input.stream_intervals.has_value());  // not all runs have them
  const LedgerContents recent = read_ledger(file.path(), "concurrent");
  ASSERT_TRUE(recent.input.stream_intervals.has_value());
  EXPECT_EQ(recent.input.stream_intervals->size(), 1u);
}

// Schema 4: a run records its GPU driver, and its intervals carry it; an older run, read
// before or after the upgrade, has none.
TEST(LedgerReader, ARunsDriverReachesItsIntervalsAndOlderRunsHaveNone) {
  TempLedgerPath file;
  write_version_two(file.path());
  EXPECT_EQ(read_ledger(file.path()).input.intervals[0].driver, "");
  {
    Ledger upgraded(file.path());
    const auto run = upgraded.begin_run({.start = 3000.0,
                                         .version = "test",
                                         .backend = "cuda",
                                         .policy = "concurrent",
                                         .streams_recorded = true,
                                         .driver = "580.159.04"});
    upgraded.record(IntervalRow{.run_id = run,
                                .engine = "d",
                                .kind = "decode",
                                .start = 3001.0,
                                .end = 3002.0,
                                .context_tokens = 10,
                                .request_id = 1});
    upgraded.end_run(run, 3003.0, 0);
  }
  const LedgerContents contents = read_ledger(file.path());
  ASSERT_EQ(contents.runs.size(), 2u);
  EXPECT_EQ(contents.runs[0].driver, "");
  EXPECT_EQ(contents.runs[1].driver, "580.159.04");
  ASSERT_EQ(contents.input.intervals.size(), 2u);
  EXPECT_EQ(contents.input.intervals[0].driver, "");
  EXPECT_EQ(contents.input.intervals[1].driver, "580.159.04");
}

// A ledger of schema version 4, as the baton before GPU polls wrote it.
void write_version_four(const std::filesystem::path& path) {
  Database db(path);
  db.exec(
      "CREATE TABLE runs (id INTEGER PRIMARY KEY, start REAL NOT NULL, stop REAL,"
      " version TEXT NOT NULL, backend TEXT NOT NULL, policy TEXT NOT NULL, exit_code INTEGER,"
      " streams_recorded INTEGER NOT NULL DEFAULT 0, driver TEXT);"
      "CREATE TABLE intervals (id INTEGER PRIMARY KEY, run_id INTEGER, engine TEXT NOT NULL,"
      " kind TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL, context_tokens INTEGER,"
      " request_id INTEGER, bursts INTEGER NOT NULL DEFAULT 1);"
      "CREATE TABLE stream_intervals (id INTEGER PRIMARY KEY, run_id INTEGER,"
      " stream TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL);"
      "CREATE TABLE events (id INTEGER PRIMARY KEY, run_id INTEGER, time REAL NOT NULL,"
      " class TEXT NOT NULL, engine TEXT, stream TEXT, in_flight INTEGER, detail TEXT);"
      "INSERT INTO runs VALUES (1, 1.0, 2.0, '0.1.0', 'cuda', 'concurrent', 0, 1, '580.159.04');"
      "INSERT INTO intervals VALUES (1, 1, 'd', 'decode', 1.0, 1.5, 10, 1, 1);"
      "PRAGMA user_version=4;");
}

// Schema 5: a run's GPU polls come back with their processes, in order; a version-4
// ledger has none, and upgraded in place its old run still has none.
TEST(LedgerReader, GpuPollsOfRunsThatPolledAndNoneBefore) {
  TempLedgerPath file;
  write_version_four(file.path());
  EXPECT_TRUE(read_ledger(file.path()).input.gpu_polls.empty());
  {
    Ledger upgraded(file.path());
    const auto run = upgraded.begin_run({.start = 10.0,
                                         .version = "test",
                                         .backend = "cuda",
                                         .policy = "serialize/op",
                                         .streams_recorded = true,
                                         .driver = "580"});
    upgraded.record(GpuPollRow{.run_id = run,
                               .poll = {.start = 10.0,
                                        .end = 11.0,
                                        .host_pids = true,
                                        .processes = {{42, "omlx", false, 93.5, 12.0},
                                                      {7, std::nullopt, true, 5.0, 1.0}}}});
    upgraded.record(GpuPollRow{
        .run_id = run, .poll = {.start = 11.0, .end = 20.0, .host_pids = false, .processes = {}}});
    EXPECT_THROW(upgraded.record(GpuPollRow{
                     .run_id = run,
                     .poll = {.start = 21.0, .end = 20.0, .host_pids = true, .processes = {}}}),
                 std::invalid_argument);
    upgraded.end_run(run, 21.0, 0);
  }
  Database db(file.path());
  EXPECT_EQ(db.user_version(), kLedgerSchemaVersion);
  const LedgerContents contents = read_ledger(file.path());
  ASSERT_EQ(contents.input.gpu_polls.size(), 2u);
  const GpuUsePoll& first = contents.input.gpu_polls[0];
  EXPECT_EQ(first.run, 2);
  EXPECT_EQ(first.start, 10.0);
  EXPECT_EQ(first.end, 11.0);
  EXPECT_TRUE(first.host_pids);
  ASSERT_EQ(first.processes.size(), 2u);
  EXPECT_EQ(first.processes[0].pid, 42);
  EXPECT_EQ(first.processes[0].process, "omlx");
  EXPECT_FALSE(first.processes[0].own);
  EXPECT_EQ(first.processes[0].sm_percent, 93.5);
  EXPECT_EQ(first.processes[0].mem_percent, 12.0);
  EXPECT_EQ(first.processes[1].pid, 7);
  EXPECT_EQ(first.processes[1].process, "");  // not named
  EXPECT_TRUE(first.processes[1].own);
  const GpuUsePoll& second = contents.input.gpu_polls[1];
  EXPECT_FALSE(second.host_pids);
  EXPECT_TRUE(second.processes.empty());
  // Under another policy the run's polls are left out with the run.
  EXPECT_TRUE(read_ledger(file.path(), "concurrent").input.gpu_polls.empty());
}

}  // namespace
}  // namespace baton
