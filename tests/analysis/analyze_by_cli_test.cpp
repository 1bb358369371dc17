// `baton analyze --by FACTOR` end to end on ledgers written here: a window without busy
// time, a ledger given twice, what the report says where the data cannot estimate a ratio,
// and how it names and orders its levels.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "baton/ledger/ledger.h"
#include "cli_util.h"
#include "temp_dir.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_baton;

struct Busy {
  const char* engine;
  double start, end;
};

// A closed run of `busy` intervals and hangs at `hangs` (engine x, the class "hang").
void write_ledger(const fs::path& path, const std::vector<Busy>& busy,
                  const std::vector<double>& hangs) {
  Ledger ledger(path);
  const auto run = ledger.begin_run(
      {.start = 1000.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
  for (const Busy& b : busy) {
    ledger.record(IntervalRow{
        .run_id = run, .engine = b.engine, .kind = "decode", .start = b.start, .end = b.end});
  }
  for (const double t : hangs) {
    ledger.record(EventRow{.run_id = run, .time = t, .error_class = "hang", .engine = "x"});
  }
  ledger.end_run(run, 1e6, 0);
}

std::size_t position(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << "no '" << what << "' in\n" << text;
  return at;
}

class AnalyzeByCli : public ::testing::Test {
 protected:
  std::string path(const char* name) const { return (dir_.path() / name).string(); }
  testing::TempDir dir_;
};

// Before: exit 139 (a segfault in the regression) for each of these windows.
TEST_F(AnalyzeByCli, AWindowWithoutBusyTimeSaysSoAndExits1) {
  const std::string empty = path("empty.db");
  write_ledger(empty, {}, {});  // a serve run that saw no request
  const std::string data = path("data.db");
  write_ledger(data, {{"x", 1000, 4600}}, {2000});
  const std::string busy = path("busy.csv"), hangs = path("hangs.csv");
  std::ofstream(busy) << "engine,start,end\nA,1732924800,1732927800\n";
  std::ofstream(hangs) << "time,engine\n1732926900,A\n";
  for (const std::string& args :
       {"--ledger " + empty, "--ledger " + data + " --since 2000-01-01",
        "--intervals " + busy + " --events " + hangs + " --since 2025-01-01"}) {
    for (const char* as_json : {"", " --json"}) {
      const auto r = run_baton("analyze --by dual " + args + as_json);
      EXPECT_EQ(r.exit_code, 1) << args << as_json << "\n" << r.output;
      EXPECT_NE(r.output.find("no busy time in the window"), std::string::npos) << r.output;
    }
  }
}

// One file given twice, under another spelling or through a link, is one host: its
// hangs count once, with a note; --compare of a ledger with itself is a usage error.
TEST_F(AnalyzeByCli, TheSameLedgerGivenTwiceCountsOnce) {
  const std::string a = path("a.db");
  write_ledger(a, {{"x", 1000, 4600}, {"y", 2800, 4600}}, {2000, 3000});
  const std::string link = path("link.db");
  fs::create_symlink(a, link);
  const auto once = run_baton("analyze --by host --json --ledger " + a);
  ASSERT_EQ(once.exit_code, 0) << once.output;
  const json reference = json::parse(once.output);
  for (const std::string& second : {a, link, (dir_.path() / "." / "a.db").string()}) {
    const auto r = run_baton("analyze --by host --json --ledger " + a + " --ledger " + second);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(json::parse(r.output.substr(r.output.find('{')))["cells"], reference["cells"])
        << second;
    EXPECT_NE(r.output.find("note: " + second + " is the same file as " + a + ": counted once"),
              std::string::npos)
        << r.output;
  }
  const auto compare = run_baton("analyze --compare --ledger " + a + " --ledger " + link);
  EXPECT_EQ(compare.exit_code, 2) << compare.output;
  EXPECT_NE(compare.output.find("are the same ledger"), std::string::npos) << compare.output;
}

// No hang at all: no rate ratio to print (before: 7.92e-10 [0, inf]); the reference rate
// is 0 with an upper bound.
TEST_F(AnalyzeByCli, NoHangsGiveNoEstimatesInWords) {
  const std::string ledger = path("quiet.db");
  write_ledger(ledger, {{"x", 1000, 4600}, {"y", 2800, 4600}}, {});
  const auto table = run_baton("analyze --by dual --ledger " + ledger);
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("dual                         no estimate: no hangs at all"),
            std::string::npos)
      << table.output;
  EXPECT_FALSE(std::regex_search(table.output, std::regex("[0-9]e-[0-9]"))) << table.output;
  EXPECT_EQ(table.output.find("inf"), std::string::npos) << table.output;
  const auto r = run_baton("analyze --by dual --json --ledger " + ledger);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json c = json::parse(r.output)["coefficients"];
  EXPECT_EQ(c[0]["rate_ratio"], 0.0);  // the reference rate
  EXPECT_TRUE(c[0]["high"].is_number());
  EXPECT_TRUE(c[1]["rate_ratio"].is_null());
  EXPECT_TRUE(c[1]["wald_p"].is_null());
  EXPECT_EQ(c[1]["no_estimate"], "no hangs at all: no rates to compare");
}

// Three engines: busy=1 over [0, 1 h), 2 over [1 h, 2 h), 3 over [2 h, 3 h) (from 10000 s);
// hangs at busy=2 and busy=3+ only. No single column shows that the reference busy=1 has
// none: before, the ratios came out as e^22 with Wald p = 1 and [0, inf].
TEST_F(AnalyzeByCli, AReferenceLevelWithoutHangsIsUnboundedNotAHugeNumber) {
  const std::string ledger = path("busy.db");
  write_ledger(ledger, {{"x", 10000, 20800}, {"y", 13600, 20800}, {"z", 17200, 20800}},
               {14000, 15000, 18000, 19000});
  const auto r = run_baton("analyze --by busy --json --ledger " + ledger);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  for (int k = 1; k <= 2; ++k) {
    const json& c = j["coefficients"][k];
    EXPECT_TRUE(c["rate_ratio"].is_null()) << c;  // unbounded
    EXPECT_TRUE(c["wald_p"].is_null()) << c;
    EXPECT_TRUE(c["high"].is_null()) << c;
    ASSERT_TRUE(c["low"].is_number()) << c;
    EXPECT_GT(c["low"].get<double>(), 0.0) << c;
    EXPECT_LT(c["low"].get<double>(), 2.0) << c;  // 2 hangs an hour against none: not far off
  }
  EXPECT_EQ(j["coefficients"][0]["rate_ratio"], 0.0);
  const auto table = run_baton("analyze --by busy --ledger " + ledger);
  EXPECT_FALSE(std::regex_search(table.output, std::regex("[0-9]e\\+[0-9]"))) << table.output;
  EXPECT_NE(table.output.find("unbounded"), std::string::npos) << table.output;
}

// The report names its reference levels, says that a factor of one level has nothing to
// compare, lists levels in their order (busy 1, 2, 3+; days by date) and counts in words.
TEST_F(AnalyzeByCli, TheReportNamesItsReferenceAndOrdersLevels) {
  const std::string ledger = path("days.db");
  // Three UTC days from 2024-11-30 (1732924800), busy two hours a day; x alone, then x
  // with y; a hang each day while both are busy, and one while idle.
  std::vector<Busy> busy;
  for (int day = 0; day < 3; ++day) {
    const double t = 1732924800.0 + 86400.0 * day;
    busy.push_back({"x", t, t + 7200});
    busy.push_back({"y", t + 3600, t + 7200});
  }
  write_ledger(
      ledger, busy,
      {1732924800.0 + 5000, 1733011200.0 + 5000, 1733097600.0 + 5000, 1733097600.0 + 9000});
  const auto r = run_baton("analyze --by day --by host --ledger " + ledger);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("each against the reference: day=2024-11-30, host=" + ledger),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(reference: day=2024-11-30, host=" + ledger + ")"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("one level only here (host=" + ledger + "): nothing to compare"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("not separable"), std::string::npos) << r.output;
  EXPECT_LT(position(r.output, "\n  (reference"), position(r.output, "\n  day=2024-12-01"));
  EXPECT_LT(position(r.output, "\n  day=2024-12-01"), position(r.output, "\n  day=2024-12-02"));
  EXPECT_NE(r.output.find("1 hang while no LLM engine was busy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 of 3 attributed hangs in dual time"), std::string::npos) << r.output;

  const auto by_busy = run_baton("analyze --by busy --ledger " + ledger + " --until 2024-12-01");
  ASSERT_EQ(by_busy.exit_code, 0) << by_busy.output;
  EXPECT_NE(by_busy.output.find("1 of 1 attributed hang in dual time"), std::string::npos)
      << by_busy.output;
  EXPECT_NE(by_busy.output.find("each against the reference: busy=1"), std::string::npos)
      << by_busy.output;
}

}  // namespace
}  // namespace baton
