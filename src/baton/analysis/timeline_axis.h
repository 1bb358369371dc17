// The time axis of the SVG timeline (timeline_svg): maps seconds to pixels, either in one
// piece or broken, with long idle gaps cut out and drawn as narrow breaks.
//
// Why a broken axis rather than small multiples (a row per busy day): a busy stretch often
// runs over midnight, and rows would cut it in two; one row keeps every lane, the dual band
// and the hang markers on one line to be read across, and a ledger without long gaps is
// drawn exactly as before (one segment, the same scale).
//
// Which gaps are cut (gaps_to_collapse): idle gaps (no engine busy, no fault) of an hour or
// more, longest first, until those left take at most a quarter of the time drawn, or until
// the breaks would take a quarter of the width. The quarter is a share, so the rule is the
// same for a 3-hour run and a 36-day ledger, and it holds when no single gap stands out
// (a busy hour every week); it leaves at least three quarters of the plot to time with
// something going on. Pauses under an hour are never cut: within a working session they
// matter to what came before a hang, and a short ledger is drawn exactly as before.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/analysis/spans.h"

namespace baton {

// A stretch of time drawn to scale between two pixels.
struct AxisSegment {
  double t0 = 0;  // seconds, t0 < t1
  double t1 = 1;
  double x0 = 0;  // pixels, x0 <= x1
  double x1 = 0;
};

// Idle time left out of the drawing, shown as a break between x0 and x1.
struct AxisBreak {
  double t0 = 0;  // the idle gap, seconds
  double t1 = 0;
  double x0 = 0;  // the break's column, pixels
  double x1 = 0;
};

constexpr double kMinCollapsedGap = 3600;  // seconds: shorter pauses stay to scale
constexpr double kMaxIdleShare = 0.25;     // of the time drawn, left to gaps over the hour
constexpr double kBreakWidth = 28;         // pixels
constexpr double kMinSegmentWidth = 6;     // pixels, so a lone fault stays visible

// The idle gaps between `busy` (sorted, joined spans; a fault is a span of zero length)
// that the rule above cuts, in time order. At most `max_breaks`.
[[nodiscard]] Spans gaps_to_collapse(const Spans& busy, std::size_t max_breaks);

class TimeAxis {
 public:
  // [t0, t1] (t0 < t1) onto [left, right] in one piece.
  static TimeAxis continuous(double t0, double t1, double left, double right);
  // `busy` (sorted, joined, not empty) onto [left, right], cut at gaps_to_collapse. Every
  // segment shares one scale, except one so short it is widened to kMinSegmentWidth.
  // Without gaps to cut it equals continuous() over busy's first start to last end.
  static TimeAxis broken(const Spans& busy, double left, double right);

  // The pixel of `t`; in a cut gap, the middle of its break.
  [[nodiscard]] double x(double t) const;
  [[nodiscard]] const std::vector<AxisSegment>& segments() const { return segments_; }
  [[nodiscard]] const std::vector<AxisBreak>& breaks() const { return breaks_; }

 private:
  std::vector<AxisSegment> segments_;  // in time order, one more than breaks_
  std::vector<AxisBreak> breaks_;
};

}  // namespace baton
