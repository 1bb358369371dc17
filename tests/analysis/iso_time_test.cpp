#include "baton/analysis/iso_time.h"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

// Expected values are derived by hand and cross-checked with `date -u -d TIME +%s`
// (GNU date 9.1), so they do not depend on the code under test.
//   1970-01-01 to 2024-01-01: 54 years of which 13 leap (1972..2020) = 54*365+13 = 19723 days.
//   2024-02-29T00:00:00Z: 19723 + 31 (Jan) + 28 = 19782 days * 86400 = 1709164800.
//   2024-11-30T12:00:00Z: 19723 + 334 (Jan..Nov 29 of a leap year) = 20057 days
//     = 1732924800, + 12 h = 1732968000.
constexpr double k20240229 = 1709164800.0;
constexpr double k20241130Noon = 1732968000.0;

void expect_time(const std::string& text, double expected) {
  const std::optional<double> parsed = parse_time(text);
  ASSERT_TRUE(parsed.has_value()) << text;
  EXPECT_DOUBLE_EQ(*parsed, expected) << text;
}

TEST(ParseTime, UnixSeconds) {
  expect_time("1732950000", 1732950000.0);
  expect_time("1732950000.25", 1732950000.25);
  expect_time("0", 0.0);
  expect_time("0.5", 0.5);
  expect_time("001", 1.0);
}

TEST(ParseTime, RejectsWhatIsNotADecimalNumber) {
  for (const char* text :
       {"",   "nan", "NaN", "inf", "-inf", "infinity", "0x10", "0X1p3", "1e9", "1E9",
        "+5", "-5",  "1.",  ".5",  "1..2", "1.2.3",    " 1",   "1 ",    "12a", "1,5"}) {
    EXPECT_FALSE(parse_time(text).has_value()) << "'" << text << "'";
  }
}

TEST(ParseTime, RejectsANumberTooLargeForADouble) {
  EXPECT_FALSE(parse_time(std::string(400, '9')).has_value());
}

TEST(ParseTime, IsoWithZ) {
  expect_time("2024-02-29T00:00:00Z", k20240229);
  expect_time("2024-11-30T12:00:00Z", k20241130Noon);
  expect_time("2024-11-30t12:00:00z", k20241130Noon);
  expect_time("1970-01-01T00:00:00Z", 0.0);
  // date -u -d 1969-12-31T23:59:59Z +%s = -1
  expect_time("1969-12-31T23:59:59Z", -1.0);
  // 2000 is a leap year (divisible by 400). 1970 to 2000: 30*365 + 7 leap days = 10957
  // days; + 31 + 29 = 11017 days = 951868800 (date -u -d 2000-03-01T00:00:00Z +%s agrees).
  expect_time("2000-03-01T00:00:00Z", 951868800.0);
  expect_time("2000-02-29T00:00:00Z", 951782400.0);  // 951868800 - 86400
  // The range ends: date -u -d ... +%s for 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
  expect_time("0001-01-01T00:00:00Z", -62135596800.0);
  expect_time("9999-12-31T23:59:59Z", 253402300799.0);
}

TEST(ParseTime, IsoSpaceSeparatorAndFraction) {
  expect_time("2024-11-30 12:00:00Z", k20241130Noon);
  expect_time("2024-11-30T12:00:00.123Z", k20241130Noon + 0.123);
  expect_time("2024-11-30T12:00:00.5Z", k20241130Noon + 0.5);
  expect_time("2024-11-30T12:00:07.000000001Z", k20241130Noon + 7.000000001);
}

TEST(ParseTime, IsoOffsets) {
  // Local 12:00 at +01:00 is 11:00 UTC: 1732968000 - 3600 = 1732964400
  // (date -u -d 2024-11-30T12:00:00+01:00 +%s = 1732964400).
  expect_time("2024-11-30T12:00:00+01:00", 1732964400.0);
  expect_time("2024-11-30T12:00:00+0100", 1732964400.0);
  expect_time("2024-11-30T12:00:00.123+01:00", 1732964400.123);
  // Local 12:00 at -05:00 is 17:00 UTC: 1732968000 + 5 * 3600 = 1732986000.
  expect_time("2024-11-30 12:00:00-05:00", 1732986000.0);
  expect_time("2024-11-30T12:00:00-0500", 1732986000.0);
  // Across midnight: 23:30 at -05:30 is 05:00 UTC the next day:
  // 1732968000 + 11.5 h + 5.5 h = 1732968000 + 61200 = 1733029200.
  expect_time("2024-11-30T23:30:00-05:30", 1733029200.0);
  expect_time("2024-11-30T12:00:00+00:00", k20241130Noon);
  expect_time("2024-11-30T12:00:00-00:00", k20241130Noon);
}

TEST(ParseTime, LeapSecondCountsAsTheNextSecond) {
  // 2016-12-31T23:59:59Z = 1483228799 (date -u); :60 is the POSIX 1483228800.
  expect_time("2016-12-31T23:59:60Z", 1483228800.0);
  expect_time("2016-12-31T23:59:60.5Z", 1483228800.5);
}

TEST(ParseTime, RejectsATimeWithoutAnOffset) {
  EXPECT_FALSE(parse_time("2024-11-30T12:00:00").has_value());
  EXPECT_FALSE(parse_time("2024-11-30 12:00:00.5").has_value());
}

TEST(ParseTime, RejectsDatesThatDoNotExist) {
  for (const char* text :
       {"2023-02-29T00:00:00Z",  // 2023 is not a leap year
        "1900-02-29T00:00:00Z",  // divisible by 100, not by 400
        "2024-02-30T00:00:00Z", "2024-04-31T00:00:00Z", "2024-00-10T00:00:00Z",
        "2024-13-01T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-32T00:00:00Z"}) {
    EXPECT_FALSE(parse_time(text).has_value()) << text;
  }
}

TEST(ParseTime, RejectsTimesOutOfRange) {
  for (const char* text : {"2024-11-30T24:00:00Z", "2024-11-30T12:60:00Z", "2024-11-30T12:00:61Z",
                           "2024-11-30T12:00:00+24:00", "2024-11-30T12:00:00+01:60"}) {
    EXPECT_FALSE(parse_time(text).has_value()) << text;
  }
}

TEST(ParseTime, RejectsMalformedIso) {
  for (const char* text :
       {"2024-11-30", "2024-11-30T12:00Z", "2024-11-30T12:00:00", "24-11-30T12:00:00Z",
        "2024-1-30T12:00:00Z", "2024/11/30T12:00:00Z", "2024-11-30X12:00:00Z",
        "2024-11-30T12:00:00.Z", "2024-11-30T12:00:00,5Z", "2024-11-30T12:00:00+1",
        "2024-11-30T12:00:00+01:0", "2024-11-30T12:00:00+01:00 ", " 2024-11-30T12:00:00Z",
        "2024-11-30T12:00:00ZZ", "2024-11-30T12:00:00UTC", "yesterday", "+2024-11-30T12:00:00Z"}) {
    EXPECT_FALSE(parse_time(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace baton
