#include "baton/analysis/csv_fields.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using Fields = std::vector<std::string>;

std::vector<std::pair<std::size_t, std::string>> all_lines(std::string_view text) {
  std::vector<std::pair<std::size_t, std::string>> out;
  CsvLines lines(text);
  while (const std::optional<CsvLine> line = lines.next()) {
    out.emplace_back(line->number, std::string(line->text));
  }
  return out;
}

TEST(CsvLines, SkipsBlankLinesAndCountsThem) {
  const auto lines = all_lines("a\n\n  \t\nb\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::make_pair(std::size_t{1}, std::string("a")));
  EXPECT_EQ(lines[1], std::make_pair(std::size_t{4}, std::string("b")));
}

TEST(CsvLines, StripsBomAndCarriageReturns) {
  const auto lines = all_lines("\xEF\xBB\xBFh1,h2\r\nx,y\r\n\r\nz");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].second, "h1,h2");
  EXPECT_EQ(lines[1].second, "x,y");
  EXPECT_EQ(lines[2], std::make_pair(std::size_t{4}, std::string("z")));
}

TEST(CsvLines, EmptyTextHasNoLines) {
  EXPECT_TRUE(all_lines("").empty());
  EXPECT_TRUE(all_lines("\xEF\xBB\xBF").empty());
  EXPECT_TRUE(all_lines("\n\r\n \n").empty());
}

TEST(SplitCsvFields, PlainFieldsAreTrimmed) {
  const CsvFields split = split_csv_fields(" a , b\t,c,, ");
  EXPECT_FALSE(split.error.has_value());
  EXPECT_EQ(split.fields, (Fields{"a", "b", "c", "", ""}));
}

TEST(SplitCsvFields, QuotedFieldsHoldCommasAndDoubledQuotes) {
  const CsvFields split = split_csv_fields(R"("a,b" , "say ""hi""",""," x ")");
  EXPECT_FALSE(split.error.has_value());
  EXPECT_EQ(split.fields, (Fields{"a,b", "say \"hi\"", "", " x "}));
}

TEST(SplitCsvFields, TrailingCommaAfterQuotedFieldAddsAnEmptyField) {
  EXPECT_EQ(split_csv_fields(R"("a",)").fields, (Fields{"a", ""}));
}

TEST(SplitCsvFields, UnterminatedQuoteIsAnError) {
  const CsvFields split = split_csv_fields(R"(a,"b,c)");
  ASSERT_TRUE(split.error.has_value());
  EXPECT_EQ(*split.error, "unterminated quote in field 2");
}

TEST(SplitCsvFields, TextAfterClosingQuoteIsAnError) {
  const CsvFields split = split_csv_fields(R"("a"b,c)");
  ASSERT_TRUE(split.error.has_value());
  EXPECT_EQ(*split.error, "unexpected text after the closing quote of field 1");
}

TEST(TrimBlanks, TrimsSpacesAndTabsOnly) {
  EXPECT_EQ(trim_blanks(" \ta b\t "), "a b");
  EXPECT_EQ(trim_blanks(" \t "), "");
  EXPECT_EQ(trim_blanks("\r"), "\r");
}

}  // namespace
}  // namespace baton
