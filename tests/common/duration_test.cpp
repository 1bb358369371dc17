#include "baton/common/duration.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(Duration, UnitsAndPlainSeconds) {
  EXPECT_EQ(parse_duration_seconds("45m"), 2700.0);
  EXPECT_EQ(parse_duration_seconds("30s"), 30.0);
  EXPECT_EQ(parse_duration_seconds("1.5h"), 5400.0);
  EXPECT_EQ(parse_duration_seconds("1d"), 86400.0);
  EXPECT_EQ(parse_duration_seconds("90"), 90.0);
  EXPECT_EQ(parse_duration_seconds("0"), 0.0);
}

TEST(Duration, RejectsWhatIsNotADuration) {
  for (const char* bad : {"", "m", "-5m", "5 m", "5x", "inf", "nan", "5mm", "1e999"}) {
    EXPECT_FALSE(parse_duration_seconds(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace baton
