#include "baton/server/observe/recent_activity.h"

#include <algorithm>
#include <utility>

namespace baton {
namespace {

// The spans of `spans` that end after `from`, each clipped to [from, to].
std::vector<Span> clipped(const std::deque<Span>& spans, double from, double to) {
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.end <= from || s.start >= to) continue;
    out.push_back({std::max(s.start, from), std::min(s.end, to)});
  }
  return out;
}

}  // namespace

std::vector<Span> union_of(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.end <= s.start) continue;
    if (!out.empty() && s.start <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

std::vector<Span> overlap_of(const std::vector<std::vector<Span>>& lanes) {
  // +1 where a lane's busy stretch starts, -1 where it ends; at one instant the ends come
  // first, so that touching stretches do not overlap.
  std::vector<std::pair<double, int>> edges;
  for (const std::vector<Span>& lane : lanes) {
    for (const Span& s : union_of(lane)) {
      edges.emplace_back(s.start, +1);
      edges.emplace_back(s.end, -1);
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<Span> out;
  int busy = 0;
  double since = 0.0;
  for (const auto& [at, step] : edges) {
    const int before = busy;
    busy += step;
    if (before < 2 && busy >= 2) since = at;
    if (before >= 2 && busy < 2 && at > since) {
      if (!out.empty() && out.back().end == since) {
        out.back().end = at;
      } else {
        out.push_back({since, at});
      }
    }
  }
  return out;
}

RecentActivity::RecentActivity(WallReference wall, RecentActivityOptions options)
    : wall_(wall), options_(options) {}

void RecentActivity::add(std::deque<Span>& spans, Span span, double latest) const {
  if (!spans.empty() && span.start >= spans.back().start &&
      span.start <= spans.back().end + options_.merge_gap_s) {
    spans.back().end = std::max(spans.back().end, span.end);
  } else {
    spans.push_back(span);
  }
  const double oldest = latest - options_.keep_s;
  while (!spans.empty() && (spans.front().end < oldest || spans.size() > options_.max_intervals)) {
    spans.pop_front();
  }
}

void RecentActivity::burst_done(const BurstRecord& burst) {
  // Busy from asking for the turn, as in the ledger: waiting for the device is exposure.
  const Span span{.start = unix_seconds(burst.asked), .end = unix_seconds(burst.done)};
  std::lock_guard lock(bursts_mu_);
  add(engines_[burst.engine], span, span.end);
}

void RecentActivity::stream_busy(StreamId stream, TimePoint at) {
  std::lock_guard lock(streams_mu_);
  busy_streams_[stream] = at;
  if (busy_streams_.size() == 2) overlap_since_ = unix_seconds(at);
}

void RecentActivity::stream_idle(StreamId stream, TimePoint at) {
  std::lock_guard lock(streams_mu_);
  if (busy_streams_.erase(stream) == 0) return;  // never seen busy
  if (busy_streams_.size() == 1 && overlap_since_) {
    // Streams report from their own threads, so times may arrive a little out of order:
    // an "overlap" that ends before it began was none.
    const double end = unix_seconds(at);
    if (end > *overlap_since_) add(stream_overlap_, {*overlap_since_, end}, end);
    overlap_since_.reset();
  }
}

ActivityWindow RecentActivity::window(double seconds, const std::vector<std::string>& engines,
                                      TimePoint now) const {
  ActivityWindow out;
  out.now = unix_seconds(now);
  const double from = out.now - std::min(seconds, options_.keep_s);
  {
    std::lock_guard lock(bursts_mu_);
    for (const std::string& name : engines) {
      const auto it = engines_.find(name);
      out.engines.push_back(
          {name, it == engines_.end() ? std::vector<Span>{} : clipped(it->second, from, out.now)});
    }
    for (const auto& [name, spans] : engines_) {
      if (std::find(engines.begin(), engines.end(), name) != engines.end()) continue;
      out.engines.push_back({name, clipped(spans, from, out.now)});
    }
  }
  std::vector<std::vector<Span>> lanes;
  for (EngineLane& lane : out.engines) {
    lane.intervals = union_of(std::move(lane.intervals));
    lanes.push_back(lane.intervals);
  }
  out.overlap = overlap_of(lanes);
  std::lock_guard lock(streams_mu_);
  out.stream_overlap = clipped(stream_overlap_, from, out.now);
  if (overlap_since_ && *overlap_since_ < out.now) {  // overlapping right now
    out.stream_overlap.push_back({.start = std::max(*overlap_since_, from), .end = out.now});
  }
  return out;
}

}  // namespace baton
