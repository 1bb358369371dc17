// `baton analyze` and `baton plan` end to end through the command line: CSV logs in, the
// documented JSON keys and exit codes out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "baton/analysis/timeline_axis.h"
#include "baton/ledger/ledger.h"
#include "baton/ledger/sqlite.h"
#include "cli_util.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

// A hang of `engine` at `time`, one command buffer in flight, as the watchdog records it.
EventRow ledger_hang(std::int64_t run, double time, const std::string& engine) {
  return {.run_id = run, .time = time, .error_class = "hang", .engine = engine, .in_flight = 1};
}

// A busy interval of one request at 64 tokens of context.
IntervalRow ledger_busy(std::int64_t run, const std::string& engine, const std::string& kind,
                        double start, double end) {
  return {.run_id = run,
          .engine = engine,
          .kind = kind,
          .start = start,
          .end = end,
          .context_tokens = 64,
          .request_id = 1};
}

using testing::run_baton;

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("baton-analyze-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  fs::path dir_;
};

// A busy [0, 3000 s), B busy [2000, 3000 s) from 2024-11-30T00:00:00Z (1732924800):
// dual share 1/3; three attributed hangs, all in dual time.
constexpr const char* kBusy =
    "engine,start,end,context_tokens\n"
    "A,1732924800,1732927800,40000\n"
    "B,2024-11-30T00:33:20Z,2024-11-30T01:50:00+01:00,40000\n";
constexpr const char* kHangs =
    "time,engine,class\n"
    "1732926900,A,hang\n"
    "1732927000,B,\n"
    "1732927100,A,timeout\n"
    "1732927200,,hang\n";

TEST_F(AnalyzeCli, CsvLogsGiveTheDocumentedJson) {
  const auto r = run_baton("analyze --intervals " + write("busy.csv", kBusy) + " --events " +
                           write("hangs.csv", kHangs) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_NEAR(j["busy_hours"].get<double>(), 3000.0 / 3600.0, 1e-9);
  EXPECT_NEAR(j["dual_hours"].get<double>(), 1000.0 / 3600.0, 1e-9);
  EXPECT_NEAR(j["dual_share"].get<double>(), 1.0 / 3.0, 1e-9);
  EXPECT_EQ(j["uniform_test"]["n"], 3);
  EXPECT_EQ(j["uniform_test"]["in_dual"], 3);
  EXPECT_NEAR(j["uniform_test"]["p"].get<double>(), 1.0 / 27.0, 1e-12);
  EXPECT_EQ(j["hangs"]["unattributed"], 1);
  EXPECT_EQ(j["long_context"]["two_or_more_hangs"], 4);
  ASSERT_EQ(j["by_engine"].size(), 2u);
  EXPECT_EQ(j["by_engine"][0]["engine"], "A");
  EXPECT_EQ(j["by_engine"][0]["with_others_hangs"], 2);
  EXPECT_NEAR(j["by_engine"][0]["alone_hours"].get<double>(), 2000.0 / 3600.0, 1e-9);
  for (const char* key : {"clusters", "p_clusters", "days", "p_days"}) {
    EXPECT_TRUE(j["dependence"].contains(key)) << key;
  }
}

TEST_F(AnalyzeCli, TableAndPlot) {
  const std::string svg = (dir_ / "timeline.svg").string();
  const auto r = run_baton("analyze --intervals " + write("busy.csv", kBusy) + " --events " +
                           write("hangs.csv", kHangs) + " --cluster-window 10m --plot " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Uniform placement"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("clusters (10 min window)"), std::string::npos) << r.output;
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
}

// Two busy hours 30 days apart: the plot cuts the month between them out of its axis,
// unless told to keep it; any other --plot-gaps is a usage error.
TEST_F(AnalyzeCli, PlotGapsCollapseOrKeepTheIdleMonth) {
  const std::string busy = write("busy.csv",
                                 "engine,start,end\n"
                                 "A,2024-11-01T09:00:00Z,2024-11-01T10:00:00Z\n"
                                 "A,2024-12-01T09:00:00Z,2024-12-01T10:00:00Z\n");
  const std::string hangs = write("hangs.csv", "time,engine\n2024-12-01T09:30:00Z,A\n");
  auto plot = [&](const std::string& flags) {
    const std::string svg = (dir_ / "timeline.svg").string();
    const auto r = run_baton("analyze --intervals " + busy + " --events " + hangs + " --plot " +
                             svg + flags);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(svg);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_NE(plot("").find(">29 d 23 h"), std::string::npos);  // one lane: no room for "idle"
  EXPECT_EQ(plot(" --plot-gaps keep").find("class=\"break\""), std::string::npos);
  EXPECT_EQ(run_baton("analyze --intervals " + busy + " --events " + hangs +
                      " --plot-gaps maybe")
                .exit_code,
            2);
}

// CSV logs say when engines were busy, not when their streams had work in flight: the
// report names the exposure of its figures and says the stream side was not recorded.
TEST_F(AnalyzeCli, TheReportSaysWhichExposureItsFiguresUse) {
  const std::string busy = write("busy.csv", kBusy);
  const std::string hangs = write("hangs.csv", kHangs);
  const auto text = run_baton("analyze --intervals " + busy + " --events " + hangs);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("engines with requests in progress"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("streams with work in flight: not recorded"), std::string::npos)
      << text.output;
  const auto run = run_baton("analyze --json --intervals " + busy + " --events " + hangs);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto j = nlohmann::json::parse(run.output);
  EXPECT_EQ(j["exposure"], "engine");
  ASSERT_TRUE(j.contains("stream_exposure"));
  EXPECT_TRUE(j["stream_exposure"].is_null());
}

TEST_F(AnalyzeCli, MalformedCsvFailsWithFileAndLineAndExitCode2) {
  const std::string busy = write("busy.csv",
                                 "engine,start,end\n"
                                 "A,10,20\n"
                                 "A,30\n"            // line 3: missing column
                                 "B,yesterday,40\n"  // line 4: bad time
                                 "B,50,45\n");       // line 5: end before start
  const auto r =
      run_baton("analyze --intervals " + busy + " --events " + write("hangs.csv", "time,engine\n"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const char* line : {"busy.csv:3:", "busy.csv:4:", "busy.csv:5:"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
  }
}

TEST_F(AnalyzeCli, UsageErrorsExitWith2) {
  const std::string busy = write("busy.csv", kBusy);
  EXPECT_EQ(run_baton("analyze --intervals " + busy).exit_code, 2);  // no --events
  EXPECT_EQ(run_baton("analyze --ledger " + (dir_ / "none.db").string()).exit_code, 2);
  EXPECT_EQ(run_baton("analyze --ledger a.db --ledger b.db").exit_code, 2);  // no --compare
  EXPECT_EQ(run_baton("analyze --compare --ledger a.db").exit_code, 2);
  EXPECT_EQ(
      run_baton("analyze --intervals " + busy + " --events " + busy + " --cluster-window soon")
          .exit_code,
      2);
}

TEST_F(AnalyzeCli, HangClassesAreCaseInsensitiveAndUnknownOnesExitWith2) {
  const std::string busy = write("busy.csv", kBusy);
  const auto capitalised = run_baton("analyze --json --intervals " + busy + " --events " +
                                     write("hangs.csv", "time,engine,class\n1732926900,A,Hang\n"));
  ASSERT_EQ(capitalised.exit_code, 0) << capitalised.output;
  EXPECT_EQ(nlohmann::json::parse(capitalised.output)["hangs"]["total"], 1);

  const auto unknown = run_baton("analyze --intervals " + busy + " --events " +
                                 write("bad.csv", "time,engine,class\n1732926900,A,Crash\n"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("bad.csv:2: unknown class 'Crash'"), std::string::npos)
      << unknown.output;

  const std::string hangs = write("timeout.csv", "time,engine,class\n1732926900,A,timeout\n");
  const auto by_flag =
      run_baton("analyze --json --intervals " + busy + " --events " + hangs + " --class TimeOut");
  ASSERT_EQ(by_flag.exit_code, 0) << by_flag.output;
  EXPECT_EQ(nlohmann::json::parse(by_flag.output)["hangs"]["total"], 1);
  const auto bad_flag =
      run_baton("analyze --intervals " + busy + " --events " + hangs + " --class hangs");
  EXPECT_EQ(bad_flag.exit_code, 2) << bad_flag.output;
  EXPECT_NE(bad_flag.output.find("--class: unknown class 'hangs'"), std::string::npos)
      << bad_flag.output;
}

// One run under concurrent and one under serialize/layer.
void write_two_policies(const fs::path& path) {
  Ledger ledger(path);
  for (const char* policy : {"concurrent", "serialize/layer"}) {
    const auto run =
        ledger.begin_run({.start = 1000.0, .version = "test", .backend = "cpu", .policy = policy});
    ledger.record(ledger_busy(run, "decode", "decode", 1001.0, 1002.0));
    ledger.end_run(run, 1003.0, 0);
  }
}

TEST_F(AnalyzeCli, APolicyTheLedgerDoesNotHoldExitsWith2AndNamesThoseItHolds) {
  const fs::path ledger = dir_ / "two.db";
  write_two_policies(ledger);
  const std::string holds = "it holds: concurrent, serialize/layer";
  const auto single = run_baton("analyze --ledger " + ledger.string() + " --policy NOSUCH");
  EXPECT_EQ(single.exit_code, 2) << single.output;
  EXPECT_NE(single.output.find("no run under policy 'NOSUCH'"), std::string::npos) << single.output;
  EXPECT_NE(single.output.find(holds), std::string::npos) << single.output;

  const auto compare = run_baton("analyze --compare --ledger " + ledger.string() +
                                 " --policy concurrent --policy serialise/layer");
  EXPECT_EQ(compare.exit_code, 2) << compare.output;
  EXPECT_NE(compare.output.find("'serialise/layer'"), std::string::npos) << compare.output;
  EXPECT_NE(compare.output.find(holds), std::string::npos) << compare.output;

  EXPECT_EQ(run_baton("analyze --ledger " + ledger.string() + " --policy concurrent").exit_code, 0);
}

// A policy given without the options its runs' name carries selects them, as the README's
// example does (`repro` names its runs "serialize/layer+decode-first"); one that could mean
// two policies is refused with both named.
TEST_F(AnalyzeCli, APolicyWithoutItsOptionsSelectsTheRunsThatCarryThem) {
  const fs::path path = dir_ / "options.db";
  {
    Ledger ledger(path);
    for (const char* policy : {"concurrent", "serialize/layer+decode-first", "serialize/op+a",
                               "serialize/op+b"}) {
      const auto run = ledger.begin_run(
          {.start = 1000.0, .version = "test", .backend = "cpu", .policy = policy});
      ledger.record(IntervalRow{
          .run_id = run, .engine = "decode", .kind = "decode", .start = 1001.0, .end = 1002.0});
      ledger.end_run(run, 1003.0, 0);
    }
  }
  const std::string ledger = " --ledger " + path.string();
  const auto r =
      run_baton("analyze --compare" + ledger + " --policy concurrent --policy serialize/layer");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: --policy serialize/layer is serialize/layer+decode-first in " +
                          path.string()),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("== " + path.string() + " [serialize/layer+decode-first]"),
            std::string::npos)
      << r.output;
  const auto two = run_baton("analyze" + ledger + " --policy serialize/op");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_NE(two.output.find("serialize/op+a, serialize/op+b"), std::string::npos) << two.output;
  EXPECT_EQ(run_baton("analyze" + ledger + " --policy serialize").exit_code, 2);
}

// The README's `repro --compare` then `analyze --compare` example, as written there but
// for a shorter run and a ledger of the test's own.
TEST_F(AnalyzeCli, TheReadmeCompareExampleRuns) {
  std::ifstream in(std::string(BATON_TEST_DATA) + "/../../README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto command = [&](const std::string& start) {
    const std::size_t from = readme.find(start);
    EXPECT_NE(from, std::string::npos) << start;
    std::string line;
    for (std::size_t i = from; i < readme.size() && readme[i] != '\n'; ++i) {
      if (readme[i] == '\\' && i + 1 < readme.size() && readme[i + 1] == '\n') {
        i += 1;  // a continued line: the next one's indent is a space like another
        continue;
      }
      line += readme[i];
    }
    const auto replace = [&line](const std::string& what, const std::string& with) {
      const std::size_t at = line.find(what);
      if (at != std::string::npos) line.replace(at, what.size(), with);
    };
    replace("build/release/baton ", "");
    replace("/tmp/ab.db", (dir_ / "ab.db").string());
    replace("--duration 20", "--duration 1");
    return line;
  };
  const auto repro = run_baton(command("build/release/baton repro --compare"), 120);
  ASSERT_EQ(repro.exit_code, 0) << repro.output;
  const auto analyze =
      run_baton(command("build/release/baton analyze --ledger /tmp/ab.db --compare"));
  EXPECT_EQ(analyze.exit_code, 0) << analyze.output;
  EXPECT_NE(analyze.output.find("[serialize/layer"), std::string::npos) << analyze.output;
}

// A ledger whose pages are damaged: the message names the file and the problem, and not
// the SQL statement that met it.
TEST_F(AnalyzeCli, ADamagedLedgerIsNamedWithItsProblemNotItsSql) {
  const fs::path path = dir_ / "damaged.db";
  {
    Ledger ledger(path);
    const auto run = ledger.begin_run(
        {.start = 1000.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
    for (int i = 0; i < 2000; ++i) {
      ledger.record(IntervalRow{.run_id = run,
                                .engine = "decode",
                                .kind = "decode",
                                .start = 1001.0 + i,
                                .end = 1001.5 + i});
    }
    ledger.end_run(run, 5000.0, 0);
  }
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096 * 3);
    const std::string garbage(4096 * 8, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const auto r = run_baton("analyze --ledger " + path.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot read the ledger " + path.string() +
                          ": database disk image is malformed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("SELECT"), std::string::npos) << r.output;
}

// The help says what --plot-gaps does with the share of idle time the code uses.
TEST_F(AnalyzeCli, PlotGapsHelpGivesTheShareTheCodeUses) {
  const auto r = run_baton("analyze --help");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("at most {:g}% of the time", 100.0 * kMaxIdleShare)),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("tenth"), std::string::npos) << r.output;
}

TEST_F(AnalyzeCli, ARunThatWasNeverClosedIsAWarning) {
  const fs::path path = dir_ / "open.db";
  {
    Ledger ledger(path);
    const auto closed = ledger.begin_run(
        {.start = 1000.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
    ledger.record(ledger_busy(closed, "decode", "decode", 1001.0, 1002.0));
    ledger.end_run(closed, 1003.0, 0);
    const auto open = ledger.begin_run(
        {.start = 2000.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
    ledger.record(ledger_busy(open, "decode", "decode", 2001.0, 2002.0));
    ledger.flush();  // as a server killed at this moment leaves it
  }
  const auto r = run_baton("analyze --ledger " + path.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: run 2 of " + path.string() +
                          " (started 1970-01-01 00:33:20 UTC) was never closed"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("run 1 of"), std::string::npos) << r.output;

  const fs::path closed_only = dir_ / "closed.db";
  write_two_policies(closed_only);
  const auto quiet = run_baton("analyze --ledger " + closed_only.string());
  EXPECT_EQ(quiet.output.find("never closed"), std::string::npos) << quiet.output;
}

TEST_F(AnalyzeCli, AFileThatIsNotALedgerExitsWith2AndNamesThePath) {
  const std::string text = write("notes.txt", "this is not a database, it is a note\n");
  const std::string empty = write("empty.db", "");
  const fs::path other = dir_ / "other.db";
  {
    Database db(other);
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  }
  for (const std::string& path : {text, empty, other.string()}) {
    const auto r = run_baton("analyze --ledger " + path);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(path + " is not a baton ledger"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("PRAGMA"), std::string::npos) << r.output;
  }
}

// Two ledgers as one fleet: host "a" saw its hangs while both engines were busy, host "b"
// the same; --by dual --by host gives a cell per state and host, and the documented keys.
TEST_F(AnalyzeCli, ByFactorsOverTwoLedgersIsOneFleet) {
  std::vector<std::string> paths;
  for (const char* name : {"a.db", "b.db"}) {
    const fs::path path = dir_ / name;
    Ledger ledger(path);
    const auto run = ledger.begin_run(
        {.start = 1000.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
    ledger.record(ledger_busy(run, "x", "decode", 1000.0, 4600.0));
    ledger.record(ledger_busy(run, "y", "prefill", 2800.0, 4600.0));
    ledger.record(ledger_hang(run, 3000.0, "x"));
    ledger.record(ledger_hang(run, 4000.0, "y"));
    ledger.end_run(run, 5000.0, 0);
    paths.push_back(path.string());
  }
  const auto r = run_baton("analyze --ledger " + paths[0] + " --ledger " + paths[1] +
                           " --by dual --by host --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["cells"].size(), 4u);  // dual x host
  double hours = 0;
  for (const auto& cell : j["cells"]) hours += cell["hours"].get<double>();
  EXPECT_NEAR(hours, 2.0, 1e-9);
  EXPECT_EQ(j["coefficients"][1]["name"], "dual");
  EXPECT_EQ(j["coefficients"][1]["rate_ratio"], nullptr);  // no hang outside dual time
  EXPECT_EQ(j["tests"][1]["factor"], "host");
  EXPECT_NEAR(j["tests"][1]["statistic"].get<double>(), 0.0, 1e-9);  // the hosts are alike
  EXPECT_FALSE(j["notes"].empty());
  // The exact test over the fleet equals the plain analysis of one ledger, on one ledger.
  const auto one = run_baton("analyze --ledger " + paths[0] + " --by dual --json");
  const auto plain = run_baton("analyze --ledger " + paths[0] + " --json");
  const auto by = nlohmann::json::parse(one.output)["uniform_test"];
  const auto reference = nlohmann::json::parse(plain.output)["uniform_test"];
  EXPECT_EQ(by["n"], reference["n"]);
  EXPECT_EQ(by["in_dual"], reference["in_dual"]);
  EXPECT_NEAR(by["p"].get<double>(), reference["p"].get<double>(), 1e-12);
  EXPECT_EQ(j["uniform_test"]["n"], 4);  // both hosts, every hang attributed

  const auto table = run_baton("analyze --ledger " + paths[0] + " --by dual --by prefill_in_flight");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("Likelihood-ratio test of each factor"), std::string::npos);
  // dual and prefill_in_flight are on together in every busy second here.
  EXPECT_NE(table.output.find("'prefill_in_flight' cannot be separated from 'dual'"),
            std::string::npos)
      << table.output;

  const auto unknown = run_baton("analyze --ledger " + paths[0] + " --by weather");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("--by: unknown factor 'weather' (want busy, dual"),
            std::string::npos)
      << unknown.output;
  EXPECT_EQ(run_baton("analyze --ledger " + paths[0] + " --by dual --compare").exit_code, 2);
}

// NVML polls in a ledger: engine x busy [1000, 4600); another process (omlx) at 96 % SM and
// baton at 4 % over [1000, 2800), nothing over [2800, 4600). By hand: other mean
// 1800 * 96 / 3600 = 48 % SM, max 96, busy half the time; baton 1800 * 4 / 3600 = 2 %.
// One hang in each half.
TEST_F(AnalyzeCli, OtherGpuClientsFromTheLedgersPolls) {
  const fs::path path = dir_ / "polls.db";
  {
    Ledger ledger(path);
    const auto run = ledger.begin_run({.start = 1000.0,
                                       .version = "test",
                                       .backend = "cuda",
                                       .policy = "serialize/op",
                                       .streams_recorded = true,
                                       .driver = "580"});
    ledger.record(ledger_busy(run, "x", "decode", 1000.0, 4600.0));
    ledger.record(GpuPollRow{
        .run_id = run,
        .poll = {
            .start = 1000.0,
            .end = 2800.0,
            .host_pids = true,
            .processes = {
                {.pid = 1, .process = "baton", .own = true, .sm_percent = 4.0, .mem_percent = 1.0},
                {.pid = 4242,
                 .process = "omlx",
                 .own = false,
                 .sm_percent = 96.0,
                 .mem_percent = 50.0}}}});
    ledger.record(
        GpuPollRow{.run_id = run,
                   .poll = {.start = 2800.0, .end = 4600.0, .host_pids = true, .processes = {}}});
    ledger.record(ledger_hang(run, 2000.0, "x"));
    ledger.record(ledger_hang(run, 4000.0, "x"));
    ledger.end_run(run, 5000.0, 0);
  }
  const std::string ledger = " --ledger " + path.string();
  const auto r = run_baton("analyze" + ledger + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto g = nlohmann::json::parse(r.output)["gpu_clients"];
  EXPECT_DOUBLE_EQ(g["threshold_sm_percent"].get<double>(), 10.0);
  EXPECT_NEAR(g["busy_hours"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(g["sampled_busy_hours"].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(g["other_mean_sm_percent"].get<double>(), 48.0, 1e-9);
  EXPECT_NEAR(g["other_max_sm_percent"].get<double>(), 96.0, 1e-12);
  EXPECT_NEAR(g["other_busy_share"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(g["baton_mean_sm_percent"].get<double>(), 2.0, 1e-9);
  EXPECT_TRUE(g["unresolved"].is_null());
  ASSERT_EQ(g["top_others"].size(), 1u);
  EXPECT_EQ(g["top_others"][0]["process"], "omlx");
  EXPECT_EQ(g["top_others"][0]["pid"], 4242);
  EXPECT_EQ(g["verdict"],
            "another GPU client was busy (at least 10% SM) for 50.0% of baton's polled busy time "
            "(polls cover 100.0% of its busy time)");

  const auto table = run_baton("analyze" + ledger);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("other processes: mean 48.0% SM, max 96.0%, busy 50.0%"),
            std::string::npos)
      << table.output;
  EXPECT_NE(table.output.find("omlx (pid 4242)"), std::string::npos) << table.output;

  const auto higher = run_baton("analyze" + ledger + " --other-gpu-busy 97 --json");
  ASSERT_EQ(higher.exit_code, 0) << higher.output;
  EXPECT_EQ(nlohmann::json::parse(higher.output)["gpu_clients"]["verdict"],
            "ruled out: no other process reached 97% SM in baton's polled busy time (polls cover "
            "100.0% of its busy time)");
  EXPECT_EQ(run_baton("analyze" + ledger + " --other-gpu-busy 0").exit_code, 2);

  const auto by = run_baton("analyze" + ledger + " --by other_gpu_client --json");
  ASSERT_EQ(by.exit_code, 0) << by.output;
  const auto cells = nlohmann::json::parse(by.output)["cells"];
  ASSERT_EQ(cells.size(), 2u);  // idle (the reference) and busy
  for (const auto& cell : cells) {
    EXPECT_NEAR(cell["hours"].get<double>(), 0.5, 1e-12);
    EXPECT_EQ(cell["hangs"], 1);
    EXPECT_TRUE(cell["levels"].contains("other_gpu_client=busy"));
  }
}

TEST_F(AnalyzeCli, PrometheusUsageErrorsExit2AndAnUnreachableServer1) {
  const std::string url = " --prometheus http://127.0.0.1:9";  // the discard port: closed
  for (const char* args : {"", " --by dual --range week", " --by dual --ledger x.db",
                           " --by dual --selector job"}) {
    const auto r = run_baton(std::string("analyze") + url + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
  }
  const auto bad_url = run_baton("analyze --by dual --prometheus localhost:9090");
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_NE(bad_url.output.find("not an http:// URL"), std::string::npos) << bad_url.output;
  const auto down = run_baton("analyze --by dual" + url);
  EXPECT_EQ(down.exit_code, 1) << down.output;
  EXPECT_NE(down.output.find("Prometheus at http://127.0.0.1:9"), std::string::npos)
      << down.output;
}

TEST(PlanCli, JsonHasTheDocumentedKeysAndValues) {
  // N = 12 in H = 100 h; closed forms in ab_plan_test.cpp.
  const auto r = run_baton(
      "plan --baseline-events 12 --baseline-hours 100 --alpha 0.05 --alpha 0.01 --reduction 3 "
      "--hours-run 50 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j["hours_for_alpha"].size(), 2u);
  EXPECT_EQ(j["hours_for_alpha"][1]["alpha"], 0.01);
  EXPECT_NEAR(j["hours_for_alpha"][0]["conditional"].get<double>(), 28.35688421125162, 1e-6);
  EXPECT_NEAR(j["hours_for_alpha"][0]["known_rate"].get<double>(), 24.964435612949924, 1e-6);
  EXPECT_EQ(j["hours_for_reduction"]["factor"], 3.0);
  EXPECT_NEAR(j["hours_for_reduction"]["conditional"].get<double>(), 85.07065263375486, 1e-5);
  EXPECT_NEAR(j["so_far"]["p_conditional"].get<double>(), 0.007707346629258934, 1e-12);
}

TEST(PlanCli, TableAndBadArguments) {
  const auto r = run_baton("plan --baseline-events 0 --baseline-hours 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("never"), std::string::npos) << r.output;
  EXPECT_EQ(run_baton("plan --baseline-events 3").exit_code, 2);
  EXPECT_EQ(run_baton("plan --baseline-events 3 --baseline-hours 0").exit_code, 2);
  EXPECT_EQ(run_baton("plan --baseline-events 3 --baseline-hours 5 --alpha 2").exit_code, 2);
}

TEST(PlanCli, NonFiniteNumbersAreUsageErrorsNamingTheFlag) {
  const std::string base = "plan --baseline-events 3 --baseline-hours 5 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --baseline-events 3 --baseline-hours nan", "--baseline-hours"},
      {"plan --baseline-events 3 --baseline-hours inf", "--baseline-hours"},
      {base + "--alpha nan", "--alpha"},
      {base + "--alpha 0.05 --alpha NaN", "--alpha"},
      {base + "--alpha -inf", "--alpha"},
      {base + "--reduction nan", "--reduction"},
      {base + "--reduction inf", "--reduction"},
      {base + "--hours-run nan", "--hours-run"},
      {base + "--hours-run infinity", "--hours-run"},
      {base + "--json --hours-run nan", "--hours-run"},
  };
  for (const auto& [args, flag] : cases) {
    const auto r = run_baton(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(flag), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("Baseline:"), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace baton
