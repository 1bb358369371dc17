#include "baton/analysis/timeline_svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/common/clock.h"

namespace baton {
namespace {

constexpr double kT0 = 1714564800;  // 2024-05-01 12:00:00 UTC

bool starts_with_entity(const std::string& xml, std::size_t at) {
  for (const char* entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
    if (xml.compare(at, std::strlen(entity), entity) == 0) return true;
  }
  return false;
}

// Empty when `xml` is well-formed as far as this renderer goes: every tag closed in order,
// one root, attribute values quoted, and every '&' in text or attributes an entity.
std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  int roots = 0;
  for (std::size_t i = 0; i < xml.size(); ++i) {
    if (xml[i] == '&' && !starts_with_entity(xml, i)) return "bad '&' at " + std::to_string(i);
    if (xml[i] == '>') return "stray '>' at " + std::to_string(i);
    if (xml[i] != '<') continue;
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    const std::string tag = xml.substr(i + 1, end - i - 1);
    i = end;
    if (tag.empty()) return "empty tag at " + std::to_string(i);
    if (tag.front() == '?') continue;  // the XML declaration
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "odd quotes in <" + tag + ">";
    if (tag.find('<') != std::string::npos) return "'<' inside <" + tag + ">";
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag + ">";
      open.pop_back();
      continue;
    }
    if (open.empty() && ++roots > 1) return "second root <" + tag + ">";
    if (tag.back() == '/') continue;
    open.push_back(tag.substr(0, tag.find_first_of(" \n")));
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

struct Rect {
  double x;
  double width;
};

// The number in the attribute `name="..."` of the tag that starts at `tag`.
double attribute(const std::string& svg, std::size_t tag, const std::string& name) {
  const std::size_t at = svg.find(" " + name + "=\"", tag);
  return std::strtod(svg.c_str() + at + name.size() + 3, nullptr);
}

// The rects of each group whose opening tag starts with `group`, in document order.
std::vector<std::vector<Rect>> groups_of_rects(const std::string& svg, const std::string& group) {
  std::vector<std::vector<Rect>> groups;
  for (std::size_t at = svg.find(group); at != std::string::npos; at = svg.find(group, at + 1)) {
    const std::size_t end = svg.find("</g>", at);
    groups.emplace_back();
    for (std::size_t rect = svg.find("<rect ", at); rect < end;
         rect = svg.find("<rect ", rect + 1)) {
      groups.back().push_back({attribute(svg, rect, "x"), attribute(svg, rect, "width")});
    }
  }
  return groups;
}

TEST(TimelineSvg, TheTestsXmlCheckerCatchesBrokenDocuments) {
  EXPECT_EQ(xml_problem("<svg><g><rect x=\"1\"/></g><text>a &amp; b</text></svg>"), "");
  EXPECT_NE(xml_problem("<svg><g></svg></g>"), "");
  EXPECT_NE(xml_problem("<svg><g>"), "");
  EXPECT_NE(xml_problem("<svg>a & b</svg>"), "");
  EXPECT_NE(xml_problem("<svg>a > b</svg>"), "");
  EXPECT_NE(xml_problem("<svg x=\"1></svg>"), "");
  EXPECT_NE(xml_problem("<svg/><svg/>"), "");
  EXPECT_NE(xml_problem("<svg><></svg>"), "");
}

BusyInterval busy(const std::string& engine, double start, double end,
                  std::optional<std::int64_t> tokens = std::nullopt) {
  return BusyInterval{.engine = engine,
                      .start = kT0 + start,
                      .end = kT0 + end,
                      .context_tokens = tokens,
                      .kind = "prefill"};
}

HangRecord hang(const std::string& engine, double time, const std::string& error_class = "hang") {
  return HangRecord{.time = kT0 + time, .engine = engine, .error_class = error_class};
}

TEST(TimelineSvg, TwoEnginesGiveWellFormedSvgWithOneLaneEachSortedByName) {
  ExposureInput input;
  input.intervals = {busy("gamma", 0, 10), busy("alpha", 5, 20), busy("beta", 1, 2),
                     busy("alpha", 30, 40)};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "class=\"lane-label\""), 3u);
  EXPECT_LT(svg.find(">alpha<"), svg.find(">beta<"));
  EXPECT_LT(svg.find(">beta<"), svg.find(">gamma<"));
  EXPECT_NE(svg.find("baton timeline"), std::string::npos);  // the default title
}

TEST(TimelineSvg, HangsAreCountedPerLaneClassAndAttribution) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 100), busy("b", 50, 100)};
  input.hangs = {hang("a", 10), hang("a", 60), hang("b", 70), hang("", 80),
                 hang("b", 90, "timeout")};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "class=\"marker hang"), 4u);
  EXPECT_EQ(count(svg, "class=\"marker hang unattributed\""), 1u);
  EXPECT_EQ(count(svg, "class=\"marker fault\""), 1u);
  EXPECT_NE(svg.find("4 hangs, 1 other fault"), std::string::npos);
}

TEST(TimelineSvg, HangOnAnEngineWithoutIntervalsGetsALane) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 100)};
  input.hangs = {hang("ghost", 50)};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(count(svg, "class=\"lane-label\""), 2u);
  EXPECT_EQ(count(svg, "class=\"marker hang\""), 1u);
}

TEST(TimelineSvg, EngineNamesAndTitleAreEscaped) {
  ExposureInput input;
  input.intervals = {busy("a<b>&\"c'", 0, 10)};
  input.hangs = {hang("a<b>&\"c'", 5)};
  TimelineOptions options;
  options.title = "R&D <run 7>";
  const std::string svg = render_timeline_svg(input, options);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;&quot;c&apos;"), std::string::npos);
  EXPECT_NE(svg.find("R&amp;D &lt;run 7&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
}

TEST(TimelineSvg, KnownIntervalLandsAtTheExpectedPixels) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 100), busy("b", 25, 50)};
  TimelineOptions options;
  options.width = 1000;
  const std::string svg = render_timeline_svg(input, options);
  const auto lanes = groups_of_rects(svg, "<g class=\"busy\"");
  ASSERT_EQ(lanes.size(), 2u);
  ASSERT_EQ(lanes[0].size(), 1u);
  ASSERT_EQ(lanes[1].size(), 1u);
  const double left = lanes[0][0].x;
  const double width = lanes[0][0].width;  // "a" covers the whole span
  EXPECT_GT(width, 500);
  EXPECT_NEAR(lanes[1][0].x, left + 0.25 * width, 1.0);
  EXPECT_NEAR(lanes[1][0].width, 0.25 * width, 1.0);
  const auto dual = groups_of_rects(svg, "<g class=\"dual\"");
  ASSERT_EQ(dual.size(), 1u);
  ASSERT_EQ(dual[0].size(), 1u);
  EXPECT_NEAR(dual[0][0].x, left + 0.25 * width, 1.0);
  EXPECT_NEAR(dual[0][0].width, 0.25 * width, 1.0);
}

// The x of every tag that starts with `prefix`, in document order (x1 for lines).
std::vector<double> xs_of(const std::string& svg, const std::string& prefix) {
  std::vector<double> xs;
  const std::string name = prefix.rfind("<line", 0) == 0 ? "x1" : "x";
  for (std::size_t at = svg.find(prefix); at != std::string::npos; at = svg.find(prefix, at + 1)) {
    xs.push_back(attribute(svg, at, name));
  }
  return xs;
}

// Pins the coordinates the renderer gave before the broken axis existed: a ledger without
// long idle gaps must still be drawn exactly so.
TEST(TimelineSvg, ShortLedgerKeepsItsCoordinates) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 100), busy("b", 25, 50)};
  input.hangs = {hang("a", 60), hang("", 80)};
  TimelineOptions options;
  options.width = 1000;
  const std::string svg = render_timeline_svg(input, options);
  EXPECT_NE(svg.find("viewBox=\"0 0 1000 208\""), std::string::npos);
  const auto lanes = groups_of_rects(svg, "<g class=\"busy\"");
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_DOUBLE_EQ(lanes[0][0].x, 124.0);
  EXPECT_DOUBLE_EQ(lanes[0][0].width, 812.0);
  EXPECT_DOUBLE_EQ(lanes[1][0].x, 327.0);
  EXPECT_DOUBLE_EQ(lanes[1][0].width, 203.0);
  const auto dual = groups_of_rects(svg, "<g class=\"dual\"");
  ASSERT_EQ(dual.size(), 1u);
  EXPECT_DOUBLE_EQ(dual[0][0].x, 327.0);
  const std::vector<double> markers = xs_of(svg, "<line x1=\"");
  EXPECT_NE(std::find(markers.begin(), markers.end(), 611.2), markers.end());  // the hang
  EXPECT_NE(std::find(markers.begin(), markers.end(), 773.6), markers.end());  // unattributed
  const std::vector<double> ticks = xs_of(svg, "<text class=\"tick\"");
  ASSERT_EQ(ticks.size(), 7u);  // every 15 s
  EXPECT_DOUBLE_EQ(ticks.front(), 124.0);
  EXPECT_DOUBLE_EQ(ticks[1], 245.8);
  EXPECT_DOUBLE_EQ(ticks.back(), 854.8);
  EXPECT_EQ(count(svg, "class=\"break"), 0u);
}

constexpr double kDay = 86400;

// Two busy days 30 days apart (12:00-20:00 UTC each, "b" beside "a" for a while) and a
// hang on "a" at 14:00 on the second.
ExposureInput two_busy_days() {
  ExposureInput input;
  input.intervals = {busy("a", 0, 8 * kSecondsPerHour),
                     busy("b", 2 * kSecondsPerHour, 4 * kSecondsPerHour),
                     busy("a", 30 * kDay, 30 * kDay + 8 * kSecondsPerHour),
                     busy("b", 30 * kDay + 5 * kSecondsPerHour, 30 * kDay + 6 * kSecondsPerHour)};
  input.hangs = {hang("a", 30 * kDay + 2 * kSecondsPerHour)};
  return input;
}

// The plot area: the first lane's background.
Rect plot_area(const std::string& svg) {
  const std::size_t lane = svg.find("fill=\"#f3f3f3\"");
  const std::size_t tag = svg.rfind("<rect ", lane);
  return {.x = attribute(svg, tag, "x"), .width = attribute(svg, tag, "width")};
}

// Empty when every tag's x, x1, x2, y, y1, y2 (and x + width, y + height, a path's start)
// lies within the viewBox "0 0 W H"; else the first tag that does not.
std::string outside_view_box(const std::string& svg) {
  const std::size_t box = svg.find("viewBox=\"0 0 ");
  char* end = nullptr;
  const double w = std::strtod(svg.c_str() + box + 13, &end);
  const double h = std::strtod(end, nullptr);
  for (std::size_t at = svg.find('<', box); at != std::string::npos; at = svg.find('<', at + 1)) {
    const std::string tag = svg.substr(at, svg.find('>', at) - at);
    auto number = [&](const std::string& name) {
      const std::size_t a = tag.find(" " + name + "=\"");
      return a == std::string::npos ? 0.0 : std::strtod(tag.c_str() + a + name.size() + 3, nullptr);
    };
    const double x = number("x");
    const double y = number("y");
    const std::size_t d = tag.find(" d=\"M");
    const double mx = d == std::string::npos ? 0 : std::strtod(tag.c_str() + d + 5, &end);
    const double my = d == std::string::npos ? 0 : std::strtod(end, nullptr);
    for (const double v : {x, number("x1"), number("x2"), mx, x + number("width")}) {
      if (v < 0 || v > w) return tag;
    }
    for (const double v : {y, number("y1"), number("y2"), my, y + number("height")}) {
      if (v < 0 || v > h) return tag;
    }
  }
  return "";
}

TEST(TimelineSvg, TwoBusyDaysAMonthApartEachGetMostOfTheWidth) {
  const std::string svg = render_timeline_svg(two_busy_days(), {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(outside_view_box(svg), "");
  const Rect plot = plot_area(svg);
  const auto lanes = groups_of_rects(svg, "<g class=\"busy\"");
  ASSERT_EQ(lanes.size(), 2u);
  ASSERT_EQ(lanes[0].size(), 2u);  // "a": one rect a day, each the whole of its day
  for (const Rect& day : lanes[0]) EXPECT_GE(day.width, 0.4 * plot.width);
  EXPECT_NEAR(lanes[0][0].x, plot.x, 0.1);
  EXPECT_NEAR(lanes[0][1].x + lanes[0][1].width, plot.x + plot.width, 0.1);
  EXPECT_NEAR(lanes[0][0].width, lanes[0][1].width, 0.2);  // one scale: 8 h each

  EXPECT_EQ(count(svg, "<g class=\"break\""), 1u);
  EXPECT_NE(svg.find(">29 d 16 h idle</text>"), std::string::npos);  // 20:00 to 12:00
  EXPECT_NE(svg.find("1 idle gap (29 d 16 h) cut from the axis"), std::string::npos);
  EXPECT_GT(lanes[0][1].x, lanes[0][0].x + lanes[0][0].width + 20);  // the break between

  // The hang at 14:00 on day two, and "b" beside "a" from 17:00 to 18:00: on that day's
  // own scale, 2/8 and 5/8 of the way along its segment.
  const Rect day2 = lanes[0][1];
  const std::vector<double> hangs = xs_of(svg, "<g class=\"marker hang\"");
  const std::size_t marker = svg.find("<g class=\"marker hang\"");
  ASSERT_EQ(hangs.size(), 1u);
  EXPECT_NEAR(attribute(svg, svg.find("<line ", marker), "x1"), day2.x + 0.25 * day2.width, 0.1);
  const auto dual = groups_of_rects(svg, "<g class=\"dual\"");
  ASSERT_EQ(dual.size(), 1u);
  ASSERT_EQ(dual[0].size(), 2u);
  EXPECT_NEAR(dual[0][1].x, day2.x + 0.625 * day2.width, 0.1);
  EXPECT_NEAR(dual[0][1].width, 0.125 * day2.width, 0.2);
  EXPECT_NEAR(dual[0][0].x, lanes[0][0].x + 0.25 * lanes[0][0].width, 0.1);

  // True UTC ticks on each side of the break.
  EXPECT_NE(svg.find(">2024-05-01</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">2024-05-31</tspan>"), std::string::npos);
  EXPECT_EQ(svg.find(">2024-05-15</tspan>"), std::string::npos);  // idle: cut
}

TEST(TimelineSvg, KeepingGapsDrawsTheMonthToOneScale) {
  TimelineOptions options;
  options.collapse_idle_gaps = false;
  const std::string svg = render_timeline_svg(two_busy_days(), options);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(count(svg, "class=\"break"), 0u);
  const auto lanes = groups_of_rects(svg, "<g class=\"busy\"");
  ASSERT_EQ(lanes.size(), 2u);
  for (const Rect& day : lanes[0]) EXPECT_LT(day.width, 0.02 * plot_area(svg).width);
}

TEST(TimelineSvg, PausesUnderAnHourStayToScale) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 600), busy("a", 3500, 4000), busy("b", 100, 200)};
  input.hangs = {hang("a", 3600)};
  TimelineOptions keep;
  keep.collapse_idle_gaps = false;
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(count(svg, "class=\"break"), 0u);
  EXPECT_EQ(svg, render_timeline_svg(input, keep));
}

TEST(TimelineSvg, ALoneFaultFarFromTheRestGetsItsOwnSegment) {
  ExposureInput input = two_busy_days();
  input.hangs.push_back(hang("", 15 * kDay));  // unattributed, in the idle month
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(outside_view_box(svg), "");
  EXPECT_EQ(count(svg, "<g class=\"break\""), 2u);
  const std::size_t marker = svg.find("<g class=\"marker hang unattributed\"");
  ASSERT_NE(marker, std::string::npos);
  const double x = attribute(svg, svg.find("<line ", marker), "x1");
  const auto lanes = groups_of_rects(svg, "<g class=\"busy\"");
  EXPECT_GT(x, lanes[0][0].x + lanes[0][0].width);
  EXPECT_LT(x, lanes[0][1].x);
  EXPECT_NE(svg.find(">2024-05-16</tspan>"), std::string::npos);  // its own tick: 12:00
}

TEST(TimelineSvg, DualTimeNeedsTwoDifferentEngines) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 60), busy("a", 30, 100), busy("b", 100, 120)};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(count(svg, "<g class=\"dual\""), 0u);  // a overlaps itself; b only touches a
  EXPECT_NE(svg.find("dual 0 ms (0.0% of the span)"), std::string::npos);
}

TEST(TimelineSvg, LongContextIntervalsAreDrawnApart) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 10, 1000), busy("a", 20, 30, 64000), busy("a", 40, 50)};
  TimelineOptions options;
  options.long_context = 32000;
  const std::string svg = render_timeline_svg(input, options);
  const auto normal = groups_of_rects(svg, "<g class=\"busy\"");
  const auto long_context = groups_of_rects(svg, "<g class=\"busy long\"");
  ASSERT_EQ(normal.size(), 1u);
  ASSERT_EQ(long_context.size(), 1u);
  EXPECT_EQ(normal[0].size(), 2u);
  EXPECT_EQ(long_context[0].size(), 1u);
  EXPECT_NE(svg.find("32000 tokens"), std::string::npos);  // in the legend
}

TEST(TimelineSvg, ManyIntervalsStaySmall) {
  // 100k short intervals on 400 instants nine seconds (about 2.5 pixels) apart: more than
  // a drawn rect (at least a pixel) and the pixel of gap that merges, so they do not all
  // merge into one rect per lane, yet give at most one rect per instant.
  ExposureInput input;
  std::mt19937 random(7);
  std::uniform_int_distribution<int> instant(0, 399);
  std::uniform_real_distribution<double> length(0, 0.02);
  for (int i = 0; i < 100'000; ++i) {
    const double s = 9.0 * instant(random);
    input.intervals.push_back(busy(i % 2 ? "decode" : "prefill", s, s + length(random), i % 3));
  }
  for (int i = 0; i < 100'000; ++i) input.hangs.push_back(hang("decode", 9.0 * instant(random)));
  TimelineOptions options;
  options.long_context = 1;  // two thirds of each lane's intervals, drawn apart
  const std::string svg = render_timeline_svg(input, options);
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_LT(svg.size(), 500'000u);
  const auto busy_rects = groups_of_rects(svg, "<g class=\"busy");
  ASSERT_EQ(busy_rects.size(), 4u);  // two lanes, normal and long context
  for (const auto& rects : busy_rects) {
    EXPECT_GT(rects.size(), 200u);
    EXPECT_LE(rects.size(), 400u);
  }
  EXPECT_LE(count(svg, "class=\"marker hang\""), 400u);
}

TEST(TimelineSvg, EmptyInputSaysNoData) {
  const std::string svg = render_timeline_svg({}, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_EQ(count(svg, "lane-label"), 0u);
}

TEST(TimelineSvg, ZeroSpanDoesNotDivideByZero) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 0), busy("b", 0, 0)};
  input.hangs = {hang("a", 0)};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_EQ(xml_problem(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"marker hang\""), 1u);
  EXPECT_GE(count(svg, "class=\"tick\""), 2u);
}

TEST(TimelineSvg, AnHourHasRoundUtcTicks) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 3600)};
  const std::string svg = render_timeline_svg(input, {});
  const std::size_t ticks = count(svg, "class=\"tick\"");
  EXPECT_GE(ticks, 6u);
  EXPECT_LE(ticks, 10u);
  EXPECT_NE(svg.find(">12:10:00<"), std::string::npos);
  EXPECT_NE(svg.find("2024-05-01 12:00:00"), std::string::npos);  // the title line
  EXPECT_NE(svg.find("span 1 h 00 min"), std::string::npos);
}

TEST(TimelineSvg, SpansOverADayShowTheDate) {
  ExposureInput input;
  input.intervals = {busy("a", 0, 3 * 86400)};
  const std::string svg = render_timeline_svg(input, {});
  EXPECT_NE(svg.find(">00:00<tspan"), std::string::npos);
  EXPECT_NE(svg.find(">2024-05-02</tspan>"), std::string::npos);
  EXPECT_LE(count(svg, "class=\"tick\""), 10u);
}

TEST(TimelineSvg, WriteCreatesTheFileAndNamesThePathWhenItCannot) {
  const auto path = std::filesystem::temp_directory_path() / "baton_timeline_svg_test.svg";
  ExposureInput input;
  input.intervals = {busy("a", 0, 10)};
  write_timeline_svg(path, input, {});
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), render_timeline_svg(input, {}));
  std::filesystem::remove(path);

  const std::filesystem::path bad = "/nonexistent-dir/timeline.svg";
  try {
    write_timeline_svg(bad, input, {});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
