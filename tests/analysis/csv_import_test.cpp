#include "baton/analysis/csv_import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace baton {
namespace {

namespace fs = std::filesystem;

// 2024-11-30T12:00:00Z = 1732968000: 20057 days since the epoch (54 years with 13 leap
// days = 19723 days to 2024-01-01, + 334 days to Nov 30) * 86400 + 12 h; `date -u -d
// 2024-11-30T12:00:00Z +%s` agrees. See iso_time_test.cpp for every time format.
constexpr double kNoon = 1732968000.0;

// The problems that parsing `text` reports; fails the test if it does not throw.
template <typename Parse>
std::vector<std::string> problems_of(Parse parse, std::string_view text, std::string_view file) {
  try {
    parse(text, file);
  } catch (const CsvImportError& e) {
    return e.problems();
  }
  ADD_FAILURE() << "no CsvImportError for:\n" << text;
  return {};
}

std::vector<std::string> busy_problems(std::string_view text) {
  return problems_of(parse_busy_csv, text, "busy.csv");
}

std::vector<std::string> hang_problems(std::string_view text) {
  return problems_of(parse_hangs_csv, text, "hangs.csv");
}

using Problems = std::vector<std::string>;

TEST(ParseBusyCsv, ReadsRowsWithAndWithoutContextTokens) {
  const auto rows = parse_busy_csv(
      "engine,start,end,context_tokens\n"
      "decode-1,1732968000,1732968000.25,4096\n"
      "prefill-1,2024-11-30T12:00:00Z,2024-11-30T13:00:00+01:00,\n"
      "embed,1732968001,1732968002\n",
      "busy.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].engine, "decode-1");
  EXPECT_DOUBLE_EQ(rows[0].start, kNoon);
  EXPECT_DOUBLE_EQ(rows[0].end, kNoon + 0.25);
  EXPECT_EQ(rows[0].context_tokens, 4096);
  EXPECT_TRUE(rows[0].kind.empty());
  EXPECT_DOUBLE_EQ(rows[1].start, kNoon);
  EXPECT_DOUBLE_EQ(rows[1].end, kNoon);  // 13:00 at +01:00 is 12:00 UTC
  EXPECT_FALSE(rows[1].context_tokens.has_value());
  EXPECT_EQ(rows[2].engine, "embed");
  EXPECT_FALSE(rows[2].context_tokens.has_value());
}

TEST(ParseBusyCsv, ThreeColumnHeader) {
  const auto rows = parse_busy_csv("engine,start,end\na,1,2\n", "busy.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].start, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].end, 2.0);
  EXPECT_FALSE(rows[0].context_tokens.has_value());
}

TEST(ParseBusyCsv, ZeroLengthIntervalIsFine) {
  EXPECT_EQ(parse_busy_csv("engine,start,end\na,5,5", "busy.csv").size(), 1u);
}

TEST(ParseBusyCsv, BomCrlfWhitespaceBlankLinesAndNoFinalNewline) {
  const auto rows = parse_busy_csv(
      "\xEF\xBB\xBF engine , start , end \r\n"
      "\r\n"
      "  a , 1 , 2 \r\n"
      "   \r\n"
      "b,3,4",
      "busy.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].engine, "a");
  EXPECT_EQ(rows[1].engine, "b");
  EXPECT_DOUBLE_EQ(rows[1].end, 4.0);
}

TEST(ParseBusyCsv, QuotedEngineNamesAndHeader) {
  const auto rows = parse_busy_csv(
      "\"engine\",\"start\",\"end\"\n"
      "\"llama, 70b\",1,2\n"
      "\"the \"\"big\"\" one\",\"2024-11-30 12:00:00Z\",1732968001\n",
      "busy.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].engine, "llama, 70b");
  EXPECT_EQ(rows[1].engine, "the \"big\" one");
  EXPECT_DOUBLE_EQ(rows[1].start, kNoon);
}

TEST(ParseBusyCsv, HeaderOnlyGivesNoRows) {
  EXPECT_TRUE(parse_busy_csv("engine,start,end,context_tokens\n", "busy.csv").empty());
  EXPECT_TRUE(parse_busy_csv("engine,start,end", "busy.csv").empty());
}

TEST(ParseBusyCsv, EmptyFileIsAnError) {
  const Problems expected{
      "busy.csv:1: empty file, want the header engine,start,end[,context_tokens]"};
  EXPECT_EQ(busy_problems(""), expected);
  EXPECT_EQ(busy_problems("\xEF\xBB\xBF\r\n  \n"), expected);
}

TEST(ParseBusyCsv, BadHeader) {
  EXPECT_EQ(
      busy_problems("foo,bar\na,1,2\n"),
      Problems{"busy.csv:1: header must be engine,start,end[,context_tokens], found 'foo,bar'"});
  EXPECT_EQ(busy_problems("\nstart,engine,end\n"),
            Problems{"busy.csv:2: header must be engine,start,end[,context_tokens], found "
                     "'start,engine,end'"});
  EXPECT_EQ(busy_problems("engine,start,end,kind\n"),
            Problems{"busy.csv:1: header must be engine,start,end[,context_tokens], found "
                     "'engine,start,end,kind'"});
}

TEST(ParseBusyCsv, WrongColumnCount) {
  EXPECT_EQ(busy_problems("engine,start,end,context_tokens\n\n a,1\n"),
            Problems{"busy.csv:3: expected 3 or 4 columns, found 2"});
  EXPECT_EQ(busy_problems("engine,start,end\na,1,2,5\n"),
            Problems{"busy.csv:2: expected 3 columns, found 4"});
  EXPECT_EQ(busy_problems("engine,start,end,context_tokens\na,1,2,3,4\n"),
            Problems{"busy.csv:2: expected 3 or 4 columns, found 5"});
}

TEST(ParseBusyCsv, BadTimes) {
  EXPECT_EQ(busy_problems("engine,start,end\na,1,2\na,1,\n\na,yesterday,2\n"),
            (Problems{"busy.csv:3: bad end time '' (want Unix seconds or ISO-8601 with an offset)",
                      "busy.csv:5: bad start time 'yesterday' (want Unix seconds or ISO-8601 "
                      "with an offset)"}));
  EXPECT_EQ(busy_problems("engine,start,end\na,2024-11-30T12:00:00,nan\n"),
            (Problems{"busy.csv:2: bad start time '2024-11-30T12:00:00' (an ISO-8601 time needs "
                      "an offset: Z or +hh:mm)",
                      "busy.csv:2: bad end time 'nan' (want Unix seconds or ISO-8601 with an "
                      "offset)"}));
  EXPECT_EQ(busy_problems("engine,start,end\na,2023-02-29T00:00:00Z,1\n"),
            Problems{"busy.csv:2: bad start time '2023-02-29T00:00:00Z' (want Unix seconds or "
                     "ISO-8601 with an offset)"});
}

TEST(ParseBusyCsv, EndBeforeStart) {
  EXPECT_EQ(busy_problems("engine,start,end\na,1,2\na,1,2\n\n\n\na,2024-11-30T12:00:01Z,"
                          "1732968000\n"),
            Problems{"busy.csv:7: end (1732968000) is before start (2024-11-30T12:00:01Z)"});
}

TEST(ParseBusyCsv, EmptyEngine) {
  EXPECT_EQ(busy_problems("engine,start,end\n ,1,2\n\"\",1,2\n"),
            (Problems{"busy.csv:2: empty engine", "busy.csv:3: empty engine"}));
}

TEST(ParseBusyCsv, BadContextTokens) {
  EXPECT_EQ(busy_problems("engine,start,end,context_tokens\na,1,2,-3\na,1,2,1.5\na,1,2,x\n"
                          "a,1,2,99999999999999999999\na,1,2,-0\n"),
            (Problems{"busy.csv:2: context_tokens '-3' is not a non-negative integer",
                      "busy.csv:3: context_tokens '1.5' is not a non-negative integer",
                      "busy.csv:4: context_tokens 'x' is not a non-negative integer",
                      "busy.csv:5: context_tokens '99999999999999999999' is not a non-negative "
                      "integer",
                      "busy.csv:6: context_tokens '-0' is not a non-negative integer"}));
}

TEST(ParseBusyCsv, UnterminatedQuote) {
  EXPECT_EQ(busy_problems("engine,start,end\n\"a,1,2\nb,1,2\n"),
            Problems{"busy.csv:2: unterminated quote in field 1"});
}

TEST(ParseBusyCsv, EveryBadRowIsReportedAndNothingReturned) {
  const Problems problems = busy_problems(
      "engine,start,end,context_tokens\n"
      "good,1,2,3\n"
      ",1,2\n"
      "a,b\n"
      "a,3,2\n"
      "good,1,2\n"
      "a,1,2,-1\n");
  EXPECT_EQ(problems,
            (Problems{"busy.csv:3: empty engine", "busy.csv:4: expected 3 or 4 columns, found 2",
                      "busy.csv:5: end (2) is before start (3)",
                      "busy.csv:7: context_tokens '-1' is not a non-negative integer"}));
}

TEST(ParseBusyCsv, ListsTwentyProblemsThenCountsTheRest) {
  std::string text = "engine,start,end\n";
  for (int i = 0; i < 25; ++i) text += "a,x,1\n";
  try {
    parse_busy_csv(text, "busy.csv");
    FAIL() << "no CsvImportError";
  } catch (const CsvImportError& e) {
    ASSERT_EQ(e.problems().size(), CsvImportError::kMaxListed);
    EXPECT_EQ(e.omitted(), 5u);
    EXPECT_EQ(e.problems().front().rfind("busy.csv:2: bad start time 'x'", 0), 0u);
    EXPECT_EQ(e.problems().back().rfind("busy.csv:21: bad start time 'x'", 0), 0u);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(e.problems().front() + "\n", 0), 0u);
    EXPECT_TRUE(what.ends_with(e.problems().back() + "\n... and 5 more")) << what;
  }
}

TEST(ParseBusyCsv, LongValuesAreShortenedInMessages) {
  const std::string engine_and_start = "a," + std::string(100, '7') + "x";
  const Problems problems = busy_problems("engine,start,end\n" + engine_and_start + ",1\n");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("'" + std::string(60, '7') + "...'"), std::string::npos)
      << problems[0];
}

TEST(CsvImportError, IsAnInvalidArgumentWithEveryProblemInWhat) {
  const CsvImportError error({"f:1: one", "f:2: two"}, 0);
  const std::invalid_argument& base = error;
  EXPECT_STREQ(base.what(), "f:1: one\nf:2: two");
  EXPECT_EQ(error.omitted(), 0u);
}

TEST(ParseHangsCsv, ReadsRowsWithAndWithoutClass) {
  const auto rows = parse_hangs_csv(
      "time,engine,class\n"
      "1732968000,decode-1,timeout\n"
      "2024-11-30T12:00:00-05:00,,\n"
      "\"2024-11-30T12:00:00+0100\",\"prefill, big\"\n",
      "hangs.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].time, kNoon);
  EXPECT_EQ(rows[0].engine, "decode-1");
  EXPECT_EQ(rows[0].error_class, "timeout");
  EXPECT_DOUBLE_EQ(rows[1].time, kNoon + 5 * 3600);  // 12:00 at -05:00 is 17:00 UTC
  EXPECT_TRUE(rows[1].engine.empty());               // unattributed
  EXPECT_EQ(rows[1].error_class, "hang");
  EXPECT_DOUBLE_EQ(rows[2].time, kNoon - 3600);  // 12:00 at +01:00 is 11:00 UTC
  EXPECT_EQ(rows[2].engine, "prefill, big");
  EXPECT_EQ(rows[2].error_class, "hang");
}

TEST(ParseHangsCsv, ClassDefaultsToHangWithoutTheColumn) {
  const auto rows = parse_hangs_csv("time,engine\r\n1.5,a\r\n", "hangs.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].time, 1.5);
  EXPECT_EQ(rows[0].error_class, "hang");
}

TEST(ParseHangsCsv, HeaderOnlyAndEmptyFile) {
  EXPECT_TRUE(parse_hangs_csv("time,engine,class\r\n", "hangs.csv").empty());
  EXPECT_EQ(hang_problems(""),
            Problems{"hangs.csv:1: empty file, want the header time,engine[,class]"});
}

TEST(ParseHangsCsv, Malformed) {
  EXPECT_EQ(hang_problems("foo,bar\n"),
            Problems{"hangs.csv:1: header must be time,engine[,class], found 'foo,bar'"});
  EXPECT_EQ(hang_problems("time,engine\n1\n1,a,hang\nsoon,a\n"),
            (Problems{"hangs.csv:2: expected 2 columns, found 1",
                      "hangs.csv:3: expected 2 columns, found 3",
                      "hangs.csv:4: bad time 'soon' (want Unix seconds or ISO-8601 with an "
                      "offset)"}));
}

TEST(ParseHangsCsv, KnownClassesInAnyCaseAreTheLedgersNames) {
  const auto rows = parse_hangs_csv(
      "time,engine,class\n"
      "1,a,Hang\n"
      "2,a,TIMEOUT\n"
      "3,a,Submissions_Ignored\n"
      "4,a,other\n"
      "5,a,SlowDown\n",
      "hangs.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].error_class, "hang");
  EXPECT_EQ(rows[1].error_class, "timeout");
  EXPECT_EQ(rows[2].error_class, "submissions_ignored");
  EXPECT_EQ(rows[3].error_class, "other");
  EXPECT_EQ(rows[4].error_class, "slowdown");
}

TEST(ParseHangsCsv, UnknownClassesAreRefusedWithTheLine) {
  const std::string known = "(want hang, timeout, submissions_ignored, other or slowdown)";
  EXPECT_EQ(hang_problems("time,engine,class\n1,a,hang\n2,a,crash\n3,a,h ang\n"),
            (Problems{"hangs.csv:3: unknown class 'crash' " + known,
                      "hangs.csv:4: unknown class 'h ang' " + known}));
}

// A file in the test temp directory, removed afterwards.
class TempFile {
 public:
  explicit TempFile(std::string_view text)
      : path_(fs::temp_directory_path() /
              ("baton-csv-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { fs::remove(path_); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(ReadCsv, ReadsFilesAndNamesThePathInMessages) {
  const TempFile busy("engine,start,end\na,1,2\n");
  EXPECT_EQ(read_busy_csv(busy.path()).size(), 1u);
  const TempFile hangs("time,engine\nnever,a\n");
  try {
    read_hangs_csv(hangs.path());
    FAIL() << "no CsvImportError";
  } catch (const CsvImportError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(hangs.path().string() + ":2: bad time 'never'", 0), 0u)
        << e.what();
  }
}

TEST(ReadCsv, MissingFileNamesThePath) {
  const fs::path missing = fs::temp_directory_path() / "baton-csv-no-such-file.csv";
  for (auto read : {+[](const fs::path& p) { read_busy_csv(p); },
                    +[](const fs::path& p) { read_hangs_csv(p); }}) {
    try {
      read(missing);
      FAIL() << "no CsvImportError";
    } catch (const CsvImportError& e) {
      EXPECT_EQ(std::string(e.what()),
                missing.string() + ": cannot read (No such file or directory)");
    }
  }
}

TEST(ReadCsv, DirectoryIsAnError) {
  try {
    read_busy_csv(fs::temp_directory_path());
    FAIL() << "no CsvImportError";
  } catch (const CsvImportError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
