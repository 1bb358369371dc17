// A time window of the analysis: intervals clipped to it, events outside dropped, and the
// window's ends as the command line gives them.
#include "baton/analysis/time_window.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(TimeWindow, ClipsIntervalsAndDropsEventsOutside) {
  ExposureInput input;
  input.intervals = {{"a", 0, 100}, {"a", 150, 400}, {"b", 500, 600}};
  input.hangs = {{50, "a"}, {200, "a"}, {300, "a"}, {550, "b"}};
  input.stream_intervals = std::vector<StreamInterval>{{.stream = "s", .start = 0, .end = 1000}};
  const ExposureInput w = within_window(input, 100.0, 300.0);
  ASSERT_EQ(w.intervals.size(), 1u);  // [0, 100) ends where the window starts
  EXPECT_EQ(w.intervals[0].start, 150);
  EXPECT_EQ(w.intervals[0].end, 300);
  ASSERT_EQ(w.hangs.size(), 1u);  // 300 is the window's open end
  EXPECT_EQ(w.hangs[0].time, 200);
  EXPECT_EQ((*w.stream_intervals)[0].start, 100);
  EXPECT_EQ(within_window(input, std::nullopt, std::nullopt).intervals.size(), 3u);
  EXPECT_EQ(within_window(input, 450.0, std::nullopt).hangs.size(), 1u);
}

TEST(TimeWindow, EndsAreTimesOrUtcDates) {
  EXPECT_EQ(parse_window_end("2024-11-30"), 1732924800.0);
  EXPECT_EQ(parse_window_end("2024-11-30T01:00:00+01:00"), 1732924800.0);
  EXPECT_EQ(parse_window_end("1732924800"), 1732924800.0);
  EXPECT_FALSE(parse_window_end("2024-11-31").has_value());
  EXPECT_FALSE(parse_window_end("yesterday").has_value());
  EXPECT_FALSE(parse_window_end("2024-11-30T00:00:00").has_value());  // no offset
}

}  // namespace
}  // namespace baton
