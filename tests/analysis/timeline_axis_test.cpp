#include "baton/analysis/timeline_axis.h"

#include <gtest/gtest.h>

#include "baton/common/clock.h"

namespace baton {
namespace {

TEST(TimelineAxis, GapsUnderAnHourAreNeverCut) {
  // 59 minutes idle between two minutes of work: 97% of the span, yet a pause.
  EXPECT_TRUE(gaps_to_collapse({{0, 60}, {60 + 59 * 60, 60 + 60 * 60}}, 10).empty());
  EXPECT_EQ(gaps_to_collapse({{0, 60}, {60 + kSecondsPerHour, 120 + kSecondsPerHour}}, 10).size(),
            1u);
}

TEST(TimelineAxis, GapsAreCutUntilTheRestTakeAQuarterOfWhatIsDrawn) {
  // 10 h busy, 100 h idle, 10 h busy, 5 h idle, 10 h busy. Once the 100 h are cut, 35 h
  // are drawn and the 5 h gap is a seventh of them: kept.
  const Spans busy{{0, 10 * kSecondsPerHour},
                   {110 * kSecondsPerHour, 120 * kSecondsPerHour},
                   {125 * kSecondsPerHour, 135 * kSecondsPerHour}};
  const Spans cut = gaps_to_collapse(busy, 10);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0], std::make_pair(10 * kSecondsPerHour, 110 * kSecondsPerHour));
  // With 12 h instead of 5 h idle, the second is over a quarter of the 42 h left: cut too.
  const Spans longer{{0, 10 * kSecondsPerHour},
                     {110 * kSecondsPerHour, 120 * kSecondsPerHour},
                     {132 * kSecondsPerHour, 142 * kSecondsPerHour}};
  EXPECT_EQ(gaps_to_collapse(longer, 10).size(), 2u);
  EXPECT_EQ(gaps_to_collapse(longer, 1), cut);  // the largest first
}

TEST(TimelineAxis, WithoutGapsToCutItIsTheContinuousAxis) {
  const TimeAxis axis = TimeAxis::broken({{100, 200}, {250, 400}}, 50, 950);
  EXPECT_TRUE(axis.breaks().empty());
  ASSERT_EQ(axis.segments().size(), 1u);
  EXPECT_DOUBLE_EQ(axis.x(100), 50);
  EXPECT_DOUBLE_EQ(axis.x(250), 50 + 0.5 * 900);
  EXPECT_DOUBLE_EQ(axis.x(400), 950);
}

TEST(TimelineAxis, SegmentsShareOneScaleAroundTheirBreaks) {
  // 2 h and 6 h of work, 10 days apart, on 1000 pixels.
  const double t2 = 2 * kSecondsPerHour + 240 * kSecondsPerHour;
  const TimeAxis axis =
      TimeAxis::broken({{0, 2 * kSecondsPerHour}, {t2, t2 + 6 * kSecondsPerHour}}, 0, 1000);
  ASSERT_EQ(axis.breaks().size(), 1u);
  ASSERT_EQ(axis.segments().size(), 2u);
  const double drawn = 1000 - kBreakWidth;
  EXPECT_DOUBLE_EQ(axis.x(2 * kSecondsPerHour), 0.25 * drawn);
  EXPECT_DOUBLE_EQ(axis.breaks()[0].x0, 0.25 * drawn);
  EXPECT_DOUBLE_EQ(axis.x(t2), 0.25 * drawn + kBreakWidth);
  EXPECT_NEAR(axis.x(t2 + 3 * kSecondsPerHour), 0.625 * drawn + kBreakWidth, 1e-9);
  EXPECT_DOUBLE_EQ(axis.x(t2 + 6 * kSecondsPerHour), 1000);
  EXPECT_DOUBLE_EQ(axis.x(100 * kSecondsPerHour),
                   0.25 * drawn + kBreakWidth / 2);  // idle: the break
}

TEST(TimelineAxis, AnInstantAloneIsWidenedSoItShows) {
  const Spans busy{{0, 8 * kSecondsPerHour},
                   {200 * kSecondsPerHour, 200 * kSecondsPerHour},
                   {400 * kSecondsPerHour, 408 * kSecondsPerHour}};
  const TimeAxis axis = TimeAxis::broken(busy, 0, 1000);
  ASSERT_EQ(axis.segments().size(), 3u);
  const AxisSegment& lone = axis.segments()[1];
  EXPECT_DOUBLE_EQ(lone.x1 - lone.x0, kMinSegmentWidth);
  EXPECT_DOUBLE_EQ(axis.x(200 * kSecondsPerHour), (lone.x0 + lone.x1) / 2);
  const double each = (1000 - 2 * kBreakWidth - kMinSegmentWidth) / 2;
  EXPECT_NEAR(axis.segments()[0].x1, each, 1e-9);
  EXPECT_DOUBLE_EQ(axis.segments()[2].x1, 1000);
}

TEST(TimelineAxis, BreaksLeaveThreeQuartersOfTheWidthToTheData) {
  Spans busy;  // 40 busy hours a week apart: 39 gaps worth cutting
  for (int i = 0; i < 40; ++i)
    busy.emplace_back(i * 168 * kSecondsPerHour, (i * 168 + 1) * kSecondsPerHour);
  const TimeAxis axis = TimeAxis::broken(busy, 0, 1000);
  EXPECT_EQ(axis.breaks().size(), 8u);  // floor(250 / 28)
  EXPECT_LE(kBreakWidth * static_cast<double>(axis.breaks().size()), 250);
}

}  // namespace
}  // namespace baton
