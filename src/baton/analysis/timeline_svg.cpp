#include "baton/analysis/timeline_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "baton/analysis/spans.h"
#include "baton/analysis/timeline_axis.h"
#include "baton/analysis/timeline_lanes.h"
#include "baton/analysis/timeline_ticks.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

// Vertical layout, in pixels.
constexpr double kTitleY = 20;
constexpr double kSummaryY = 38;
constexpr double kBandTop = 50;
constexpr double kBandHeight = 14;
constexpr double kLanesTop = 72;
constexpr double kLanePitch = 30;
constexpr double kBarInset = 6;  // between a lane's edge and its bars
constexpr double kRightMargin = 64;
constexpr double kCharWidth = 6.5;  // rough width of a 12px sans-serif character
constexpr int kMinWidth = 480;
constexpr double kTickSpacing = 100;     // pixels between ticks, at least
constexpr double kBreakMargin = 36;      // pixels between a break and a tick: half a label and more
constexpr double kBreakCharWidth = 0.5;  // em: a break's label is mostly digits and spaces

constexpr std::string_view kBusyColor = "#6baed6";
constexpr std::string_view kLongColor = "#08519c";
constexpr std::string_view kDualColor = "#fd8d3c";
constexpr std::string_view kHangColor = "#d62728";
constexpr std::string_view kFaultColor = "#9467bd";
constexpr std::string_view kBreakColor = "#999";
constexpr std::string_view kDualLabel = "dual (\u22652 busy)";

template <typename... Args>
void put(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

std::string xml_escape(std::string_view text) {
  constexpr std::string_view kSpecial = "&<>\"'";
  constexpr std::string_view kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const std::size_t special = kSpecial.find(c);
    if (special != std::string_view::npos) {
      out += kEntities[special];
    } else {
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;  // control characters are not XML
    }
  }
  return out;
}

// Maps time to pixels.
struct Frame {
  timeline::Range time{.t0 = 0, .t1 = 1};  // never empty: a zero span is widened to one second
  double left = 0;   // plot area, pixels
  double right = 0;
  TimeAxis axis;  // from time onto [left, right], maybe broken at idle gaps
  std::size_t lanes = 1;
  int legend_rows = 1;

  double x(double t) const { return axis.x(t); }
  double lane_top(std::size_t i) const { return kLanesTop + kLanePitch * static_cast<double>(i); }
  double lanes_bottom() const { return lane_top(lanes); }
  double legend_y() const { return lanes_bottom() + 58; }  // first row's baseline
  double height() const { return legend_y() + 18.0 * legend_rows; }
};

std::string lane_label(const std::string& engine) { return engine.empty() ? "(unnamed)" : engine; }

// `busy`: where the axis may be broken (busy_spans); empty: it is not.
Frame make_frame(timeline::Range range, const timeline::Lanes& lanes, int width,
                 const Spans& busy) {
  Frame frame;
  if (range.t1 - range.t0 <= 0) range = timeline::Range{.t0 = range.t0 - 0.5, .t1 = range.t1 + 0.5};
  frame.time = range;
  std::size_t longest = kDualLabel.size();
  for (const auto& [name, rows] : lanes) longest = std::max(longest, lane_label(name).size());
  frame.left = std::clamp(kCharWidth * static_cast<double>(longest) + 20, 100.0, width / 3.0);
  frame.right = width - kRightMargin;
  frame.lanes = std::max<std::size_t>(lanes.size(), 1);
  if (!busy.empty()) frame.axis = TimeAxis::broken(busy, frame.left, frame.right);
  if (frame.axis.breaks().empty()) {  // exactly the scale of an axis that was never broken
    frame.axis = TimeAxis::continuous(range.t0, range.t1, frame.left, frame.right);
  }
  return frame;
}

// Pixel spans of sorted time spans, at least a pixel wide, joined where less than a pixel
// apart: at most about one per two pixels of width, however many intervals there are.
Spans on_screen(const Spans& sorted, const Frame& frame) {
  Spans pixels;
  pixels.reserve(sorted.size());
  for (const auto& [start, end] : sorted) {
    const double x0 = frame.x(start);
    pixels.emplace_back(x0, std::max(frame.x(end), x0 + 1.0));
  }
  return join_spans(pixels, 1.0);
}

void open_svg(std::string& out, int width, double height) {
  put(out,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0} {1:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
}

// The title line: the title, then the time range and span in plain weight.
void emit_title(std::string& out, const std::string& title, std::string_view range_text) {
  put(out,
      "<text x=\"10\" y=\"{}\" font-size=\"14\"><tspan font-weight=\"bold\">{}</tspan>"
      "<tspan dx=\"12\" fill=\"#444\">{}</tspan></text>\n",
      kTitleY, xml_escape(title.empty() ? "baton timeline" : title), xml_escape(range_text));
}

std::string range_text(timeline::Range range) {
  const bool two_days =
      std::floor(range.t0 / kSecondsPerDay) != std::floor(range.t1 / kSecondsPerDay);
  return fmt::format("{} \u2192 {} UTC (span {})", timeline::utc_text(range.t0, true, false),
                     timeline::utc_text(range.t1, two_days, false),
                     timeline::duration_text(range.t1 - range.t0));
}

// The second line: dual time, fault counts and the idle time cut from the axis.
void emit_summary(std::string& out, timeline::Range range, double dual_seconds,
                  const std::vector<HangRecord>& hangs, const std::vector<AxisBreak>& breaks) {
  const double span = range.t1 - range.t0;
  const auto n_hangs = std::count_if(hangs.begin(), hangs.end(),
                                     [](const HangRecord& h) { return h.error_class == "hang"; });
  const auto n_other = static_cast<std::ptrdiff_t>(hangs.size()) - n_hangs;
  std::string text = fmt::format("dual {}", timeline::duration_text(dual_seconds));
  if (span > 0) put(text, " ({:.1f}% of the span)", 100 * dual_seconds / span);
  put(text, " \u00b7 {} hang{}, {} other fault{}", n_hangs, n_hangs == 1 ? "" : "s", n_other,
      n_other == 1 ? "" : "s");
  if (!breaks.empty()) {
    double idle = 0;
    for (const AxisBreak& cut : breaks) idle += cut.t1 - cut.t0;
    put(text, " \u00b7 {} idle gap{} ({}) cut from the axis", breaks.size(),
        breaks.size() == 1 ? "" : "s", timeline::duration_text(idle));
  }
  put(out, "<text x=\"10\" y=\"{}\" fill=\"#444\">{}</text>\n", kSummaryY, text);
}

void emit_lane_backgrounds(std::string& out, const Frame& frame, const timeline::Lanes& lanes) {
  std::size_t i = 0;
  for (const auto& [name, rows] : lanes) {
    const double top = frame.lane_top(i);
    if (i % 2 == 0) {
      put(out, "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#f3f3f3\"/>\n",
          frame.left, top, frame.right - frame.left, kLanePitch);
    }
    put(out, "<text class=\"lane-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        frame.left - 8, top + kLanePitch / 2 + 4, xml_escape(lane_label(name)));
    ++i;
  }
}

// A zig-zag line down from (x, top) to `bottom`: the edge of a break.
std::string zigzag(double x, double top, double bottom) {
  std::string d = fmt::format("M{:.1f} {}", x, top);
  for (int i = 0; top + 4.0 * (i + 1) <= bottom; ++i) put(d, "l{} 4", i % 2 == 0 ? 3 : -3);
  return d;
}

// The idle time written down a break's column, centred: "29 d 16 h idle", or where the
// column (one lane) is too short for that, the length alone, smaller if need be.
void emit_break_label(std::string& out, double cx, double top, double bottom,
                      const std::string& length) {
  const double room = bottom - top - 4;
  const std::string text = length + " idle";
  auto fits = [&](const std::string& t, double size) {
    return kBreakCharWidth * size * static_cast<double>(t.size()) <= room;
  };
  const std::string& label = fits(text, 10) ? text : length;
  const int size = fits(label, 10) ? 10 : 8;
  if (!fits(label, size)) return;  // the tooltip still says it
  const double cy = (top + bottom) / 2;
  put(out,
      "<text class=\"break-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" transform=\"rotate(-90 {0:.1f} "
      "{2:.1f})\" text-anchor=\"middle\" font-size=\"{3}\" fill=\"#555\">{4}</text>",
      cx, cy + 0.35 * size, cy, size, label);
}

// Each cut idle gap: a blank column across the lanes between zig-zag edges, with its
// length written down it and the whole gap in its tooltip.
void emit_breaks(std::string& out, const Frame& frame) {
  const double top = kBandTop;
  const double bottom = frame.lanes_bottom();
  for (const AxisBreak& cut : frame.axis.breaks()) {
    const std::string length = timeline::duration_text(cut.t1 - cut.t0);
    put(out, "<g class=\"break\"><title>idle {} \u2192 {} UTC ({})</title>",
        timeline::utc_text(cut.t0, true, false), timeline::utc_text(cut.t1, true, false), length);
    put(out, "<rect x=\"{:.1f}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\"/>", cut.x0, top,
        kBreakWidth, bottom - top);
    put(out, "<path d=\"{}{}\" stroke=\"{}\" fill=\"none\"/>", zigzag(cut.x0 + 3, top, bottom),
        zigzag(cut.x1 - 6, top, bottom), kBreakColor);
    emit_break_label(out, (cut.x0 + cut.x1) / 2, top, bottom, length);
    out += "</g>\n";
  }
}

void emit_rects(std::string& out, const Spans& pixels, double y, double height,
                std::string_view attributes) {
  if (pixels.empty()) return;
  put(out, "<g {}>\n", attributes);
  for (const auto& [x0, x1] : pixels) {
    put(out, "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>\n", x0, y, x1 - x0,
        height);
  }
  out += "</g>\n";
}

void emit_dual(std::string& out, const Frame& frame, const Spans& dual) {
  put(out, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" fill=\"#a04000\">{}</text>\n",
      frame.left - 8, kBandTop + kBandHeight - 3, kDualLabel);
  const Spans pixels = on_screen(dual, frame);
  emit_rects(out, pixels, kBandTop, kBandHeight,
             fmt::format("class=\"dual\" fill=\"{}\"", kDualColor));
  emit_rects(out, pixels, kLanesTop, frame.lanes_bottom() - kLanesTop,
             fmt::format("class=\"dual-shade\" fill=\"{}\" fill-opacity=\"0.2\"", kDualColor));
}

void emit_bars(std::string& out, const Frame& frame, const timeline::Lanes& lanes) {
  std::size_t i = 0;
  for (const auto& [name, rows] : lanes) {
    const double y = frame.lane_top(i++) + kBarInset;
    const double height = kLanePitch - 2 * kBarInset;
    emit_rects(out, on_screen(rows.normal, frame), y, height,
               fmt::format("class=\"busy\" fill=\"{}\"", kBusyColor));
    emit_rects(out, on_screen(rows.long_context, frame), y, height,
               fmt::format("class=\"busy long\" fill=\"{}\"", kLongColor));
  }
}

// A tick's label: the time, and under it the date when the span is over a day.
std::string tick_label(double t, double x, double step, bool with_date) {
  if (!with_date) return timeline::utc_text(t, false, step < 1);
  const std::string text = timeline::utc_text(t, true, false);  // "YYYY-MM-DD HH:MM:SS"
  return fmt::format("{}<tspan x=\"{:.1f}\" dy=\"13\">{}</tspan>", text.substr(11, 5), x,
                     text.substr(0, 10));
}

void emit_tick(std::string& out, double t, double x, double step, bool with_date, double y) {
  put(out,
      "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#d0d0d0\"/>\n"
      "<line x1=\"{0:.1f}\" y1=\"{2}\" x2=\"{0:.1f}\" y2=\"{3}\" stroke=\"#666\"/>\n"
      "<text class=\"tick\" x=\"{0:.1f}\" y=\"{4}\" text-anchor=\"middle\">{5}</text>\n",
      x, kBandTop, y, y + 5, y + 18, tick_label(t, x, step, with_date));
}

// The round times of one segment that get a tick: not within kBreakMargin of a break (its
// label would run into the next segment's); when none is left, the segment's first instant.
std::vector<double> segment_ticks(const Frame& frame, std::size_t k, double step) {
  const AxisSegment& s = frame.axis.segments()[k];
  const bool break_left = k > 0;
  const bool break_right = k + 1 < frame.axis.segments().size();
  std::vector<double> ticks;
  const auto first = step > 0 ? static_cast<std::int64_t>(std::ceil(s.t0 / step)) : 0;
  const auto last = step > 0 ? static_cast<std::int64_t>(std::floor(s.t1 / step)) : -1;
  for (std::int64_t i = first; i <= last; ++i) {
    const double t = static_cast<double>(i) * step;
    const double x = frame.x(t);
    if ((break_left && x < s.x0 + kBreakMargin) || (break_right && x > s.x1 - kBreakMargin)) {
      continue;
    }
    ticks.push_back(t);
  }
  if (ticks.empty() && (break_left || break_right)) ticks.push_back(s.t0);
  return ticks;
}

// A double slash across the axis line at each break.
void emit_axis_breaks(std::string& out, const Frame& frame, double y) {
  for (const AxisBreak& cut : frame.axis.breaks()) {
    const double cx = (cut.x0 + cut.x1) / 2;
    put(out,
        "<path class=\"axis-break\" d=\"M{:.1f} {}l6 -12M{:.1f} {}l6 -12\" stroke=\"#666\" "
        "fill=\"none\"/>\n",
        cx - 7, y + 6, cx + 1, y + 6);
  }
}

void emit_axis(std::string& out, const Frame& frame) {
  const bool with_date = frame.time.t1 - frame.time.t0 > kSecondsPerDay;
  const double y = frame.lanes_bottom() + 4;
  double last_label = -INFINITY;
  const auto& segments = frame.axis.segments();
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const AxisSegment& s = segments[k];
    put(out, "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#666\"/>\n", s.x0, y,
        s.x1, y);
    const double step = segments.size() == 1
                            ? timeline::tick_step(s.t1 - s.t0, (s.x1 - s.x0) / kTickSpacing)
                            : timeline::segment_step(s.t1 - s.t0, s.x1 - s.x0, kTickSpacing);
    const double label_chars = with_date ? 10 : step < 1 ? 12 : 8;  // the widest line
    for (const double t : segment_ticks(frame, k, step)) {
      const double x = frame.x(t);
      if (x - last_label < kCharWidth * label_chars + 1) continue;  // would overlap the last
      emit_tick(out, t, x, step, with_date, y);
      last_label = x;
    }
  }
  emit_axis_breaks(out, frame, y);
}

void emit_marker(std::string& out, const Frame& frame, const HangRecord& hang, int lane) {
  const bool is_hang = hang.error_class == "hang";
  const std::string_view color = is_hang ? kHangColor : kFaultColor;
  const double x = frame.x(hang.time);
  const double top = lane < 0 ? kBandTop : frame.lane_top(static_cast<std::size_t>(lane)) + 1;
  const double bottom = lane < 0 ? frame.lanes_bottom() : top + kLanePitch - 2;
  put(out, "<g class=\"marker {}{}\" stroke=\"{}\" fill=\"{}\">", is_hang ? "hang" : "fault",
      lane < 0 ? " unattributed" : "", color, color);
  put(out, "<title>{} \u00b7 {} \u00b7 {} UTC</title>", xml_escape(hang.error_class),
      hang.engine.empty() ? "unattributed" : xml_escape(hang.engine),
      timeline::utc_text(hang.time, true, true));
  put(out, "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke-width=\"2\"{3}/>", x,
      top, bottom, lane < 0 ? " stroke-dasharray=\"5 3\"" : "");
  put(out, "<path d=\"M{:.1f} {}h8l-4 6z\" stroke=\"none\"/></g>\n", x - 4, top);
}

// One marker per fault; faults of one class on one lane at the same pixel share one.
void emit_markers(std::string& out, const Frame& frame, const std::vector<HangRecord>& hangs,
                  const timeline::Lanes& lanes) {
  std::set<std::tuple<long long, int, bool>> drawn;
  for (const HangRecord& hang : hangs) {
    if (!std::isfinite(hang.time)) continue;
    const int lane = hang.engine.empty()
                         ? -1
                         : static_cast<int>(std::distance(lanes.begin(), lanes.find(hang.engine)));
    const auto key =
        std::make_tuple(std::llround(frame.x(hang.time)), lane, hang.error_class == "hang");
    if (drawn.insert(key).second) emit_marker(out, frame, hang, lane);
  }
}

// A legend entry: a swatch and its text.
enum class Swatch { box, line, dashed_line, zigzag };
struct LegendItem {
  std::string_view color;
  Swatch swatch;
  std::string text;
};

std::vector<LegendItem> legend_items(const TimelineOptions& options, bool broken_axis) {
  std::vector<LegendItem> items{{.color = kBusyColor, .swatch = Swatch::box, .text = "busy"}};
  if (options.long_context) {
    items.push_back({kLongColor, Swatch::box,
                     fmt::format("busy, context \u2265 {} tokens", *options.long_context)});
  }
  items.push_back({kDualColor, Swatch::box, "dual: \u22652 engines busy"});
  items.push_back({kHangColor, Swatch::line, "hang"});
  items.push_back({kFaultColor, Swatch::line, "other fault (timeout, ...)"});
  items.push_back({"#555", Swatch::dashed_line, "unattributed (all lanes)"});
  if (broken_axis) items.push_back({kBreakColor, Swatch::zigzag, "idle gap cut from the axis"});
  return items;
}

// Where each item goes: x and row, a new row when the next one would pass `right`.
std::vector<std::pair<double, int>> legend_places(const std::vector<LegendItem>& items, double left,
                                                  double right) {
  std::vector<std::pair<double, int>> places;
  double x = left;
  int row = 0;
  for (const LegendItem& item : items) {
    const double advance = 18 + kCharWidth * static_cast<double>(item.text.size()) + 14;
    if (x > left && x + advance - 14 > right) {
      x = left;
      ++row;
    }
    places.emplace_back(x, row);
    x += advance;
  }
  return places;
}

void emit_legend(std::string& out, const Frame& frame, const std::vector<LegendItem>& items) {
  const auto places = legend_places(items, frame.left, frame.right);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const LegendItem& item = items[i];
    const double x = places[i].first;
    const double y = frame.legend_y() + 18.0 * places[i].second;
    if (item.swatch == Swatch::line || item.swatch == Swatch::dashed_line) {
      put(out,
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" "
          "stroke-width=\"2\"{4}/>\n",
          x + 7, y - 11, y + 2, item.color,
          item.swatch == Swatch::dashed_line ? " stroke-dasharray=\"4 2\"" : "");
    } else if (item.swatch == Swatch::zigzag) {
      put(out, "<path d=\"{}\" stroke=\"{}\" fill=\"none\"/>\n", zigzag(x + 5, y - 11, y + 2),
          item.color);
    } else {
      put(out, "<rect x=\"{:.1f}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", x, y - 9,
          item.color);
    }
    put(out, "<text x=\"{:.1f}\" y=\"{}\">{}</text>\n", x + 18, y, xml_escape(item.text));
  }
}

std::string no_data_svg(int width, const std::string& title) {
  std::string out;
  open_svg(out, width, 80);
  emit_title(out, title, "");
  put(out, "<text x=\"{}\" y=\"50\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
      width / 2);
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string render_timeline_svg(const ExposureInput& input, const TimelineOptions& options) {
  const int width = std::max(options.width, kMinWidth);
  const std::optional<timeline::Range> range = timeline::data_range(input);
  if (!range) return no_data_svg(width, options.title);
  const timeline::Lanes lanes = timeline::collect_lanes(input, options);
  Frame frame =
      make_frame(*range, lanes, width,
                 options.collapse_idle_gaps ? timeline::busy_spans(lanes, input.hangs) : Spans{});
  const std::vector<LegendItem> legend = legend_items(options, !frame.axis.breaks().empty());
  frame.legend_rows = legend_places(legend, frame.left, frame.right).back().second + 1;
  const Spans dual = timeline::dual_time(lanes);
  std::string out;
  open_svg(out, width, frame.height());
  emit_title(out, options.title, range_text(*range));
  emit_summary(out, *range, timeline::total(dual), input.hangs, frame.axis.breaks());
  emit_lane_backgrounds(out, frame, lanes);
  emit_breaks(out, frame);
  emit_axis(out, frame);
  emit_dual(out, frame, dual);
  emit_bars(out, frame, lanes);
  emit_markers(out, frame, input.hangs, lanes);
  emit_legend(out, frame, legend);
  out += "</svg>\n";
  return out;
}

void write_timeline_svg(const std::filesystem::path& path, const ExposureInput& input,
                        const TimelineOptions& options) {
  const std::string svg = render_timeline_svg(input, options);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    throw std::runtime_error("[timeline_svg] cannot open " + path.string() + " for writing");
  }
  file.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  file.close();
  if (!file) throw std::runtime_error("[timeline_svg] cannot write " + path.string());
}

}  // namespace baton
