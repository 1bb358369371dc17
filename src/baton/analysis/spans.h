// Spans: [start, end) pairs (seconds, or pixels on a plot) and joining them, shared by
// the exposure sums and the timeline plot.
// Thread-safety: pure functions.
#pragma once

#include <utility>
#include <vector>

namespace baton {

using Spans = std::vector<std::pair<double, double>>;

// `sorted` (by start) with neighbours that overlap, or lie less than `gap` apart, joined.
Spans join_spans(const Spans& sorted, double gap);

}  // namespace baton
