#include "baton/analysis/timeline_axis.h"

#include <algorithm>
#include <cmath>

namespace baton {
namespace {

double length(const std::pair<double, double>& span) { return span.second - span.first; }

// Pixel widths of segments lasting `durations` within `available` pixels: one scale for
// all, except those it would draw under kMinSegmentWidth, which get that width instead.
std::vector<double> segment_widths(const std::vector<double>& durations, double available) {
  const std::size_t n = durations.size();
  std::vector<bool> widened(n, false);
  double scale = 0;
  for (bool changed = true; changed;) {  // each pass widens one more or stops: n passes at most
    double fixed = 0;
    double time = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (widened[k]) {
        fixed += kMinSegmentWidth;
      } else {
        time += durations[k];
      }
    }
    if (time <= 0) return std::vector<double>(n, available / static_cast<double>(n));
    scale = (available - fixed) / time;
    changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!widened[k] && durations[k] * scale < kMinSegmentWidth) widened[k] = changed = true;
    }
  }
  std::vector<double> widths(n);
  for (std::size_t k = 0; k < n; ++k) {
    widths[k] = widened[k] ? kMinSegmentWidth : durations[k] * scale;
  }
  return widths;
}

}  // namespace

Spans gaps_to_collapse(const Spans& busy, std::size_t max_breaks) {
  Spans gaps;
  for (std::size_t i = 1; i < busy.size(); ++i) {
    const std::pair<double, double> gap{busy[i - 1].second, busy[i].first};
    if (length(gap) >= kMinCollapsedGap) gaps.push_back(gap);
  }
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const auto& a, const auto& b) { return length(a) > length(b); });
  double drawn = busy.empty() ? 0 : busy.back().second - busy.front().first;
  double idle = 0;  // in gaps of an hour or more, still drawn
  for (const auto& gap : gaps) idle += length(gap);
  Spans cut;
  for (const auto& gap : gaps) {  // largest first: the fewest breaks that do
    if (cut.size() >= max_breaks || idle <= kMaxIdleShare * drawn) break;
    cut.push_back(gap);
    drawn -= length(gap);
    idle -= length(gap);
  }
  std::sort(cut.begin(), cut.end());
  return cut;
}

TimeAxis TimeAxis::continuous(double t0, double t1, double left, double right) {
  if (!(t1 > t0)) {  // a zero span is widened to a second, centred
    t0 -= 0.5;
    t1 += 0.5;
  }
  TimeAxis axis;
  axis.segments_.push_back({t0, t1, left, right});
  return axis;
}

TimeAxis TimeAxis::broken(const Spans& busy, double left, double right) {
  const auto max_breaks =
      static_cast<std::size_t>(std::max(0.0, std::floor(0.25 * (right - left) / kBreakWidth)));
  const Spans cut = gaps_to_collapse(busy, max_breaks);
  if (cut.empty()) return continuous(busy.front().first, busy.back().second, left, right);
  std::vector<double> durations;
  double start = busy.front().first;
  for (const auto& gap : cut) {
    durations.push_back(gap.first - start);
    start = gap.second;
  }
  durations.push_back(busy.back().second - start);
  const double available = right - left - kBreakWidth * static_cast<double>(cut.size());
  const std::vector<double> widths = segment_widths(durations, available);
  TimeAxis axis;
  double t = busy.front().first;
  double x = left;
  for (std::size_t k = 0; k < widths.size(); ++k) {
    const bool last = k == cut.size();
    const double end = last ? busy.back().second : cut[k].first;
    axis.segments_.push_back({t, end, x, last ? right : x + widths[k]});
    if (last) break;
    x = axis.segments_.back().x1;
    axis.breaks_.push_back({cut[k].first, cut[k].second, x, x + kBreakWidth});
    x += kBreakWidth;
    t = cut[k].second;
  }
  return axis;
}

double TimeAxis::x(double t) const {
  const auto segment = std::lower_bound(segments_.begin(), segments_.end(), t,
                                        [](const AxisSegment& s, double v) { return s.t1 < v; });
  if (segment == segments_.end()) return segments_.back().x1;
  const AxisSegment& s = *segment;
  if (t < s.t0) {  // before the first segment, or in the cut gap before this one
    if (segment == segments_.begin()) return s.x0;
    const AxisBreak& gap = breaks_[static_cast<std::size_t>(segment - segments_.begin()) - 1];
    return (gap.x0 + gap.x1) / 2;
  }
  if (!(s.t1 > s.t0)) return (s.x0 + s.x1) / 2;
  return s.x0 + (t - s.t0) / (s.t1 - s.t0) * (s.x1 - s.x0);
}

}  // namespace baton
