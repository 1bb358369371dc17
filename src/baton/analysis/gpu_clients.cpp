#include "baton/analysis/gpu_clients.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "baton/analysis/spans.h"
#include "baton/common/clock.h"

namespace baton {
namespace {

constexpr double kMaxPercent = 100.0;
constexpr std::size_t kTopOthers = 5;

enum class Holder { baton, other, unresolved };

// Per pid, the stretches [first, last] over which some run marked it as its own.
using OwnRanges = std::map<std::int64_t, std::vector<std::pair<double, double>>>;

OwnRanges own_ranges(const std::vector<GpuUsePoll>& polls) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<double, double>> by_run;  // (run, pid)
  for (const GpuUsePoll& poll : polls) {
    if (!poll.host_pids) continue;
    for (const GpuProcessShare& p : poll.processes) {
      if (!p.own) continue;
      auto [it, fresh] = by_run.try_emplace(std::pair{poll.run, p.pid}, poll.start, poll.end);
      if (!fresh) {
        it->second.first = std::min(it->second.first, poll.start);
        it->second.second = std::max(it->second.second, poll.end);
      }
    }
  }
  OwnRanges ranges;
  for (const auto& [key, range] : by_run) ranges[key.second].push_back(range);
  return ranges;
}

Holder holder_of(const GpuProcessShare& p, const GpuUsePoll& poll, const OwnRanges& ranges) {
  if (!poll.host_pids) return Holder::unresolved;
  if (p.own) return Holder::baton;
  if (auto it = ranges.find(p.pid); it != ranges.end()) {
    for (const auto& [first, last] : it->second) {
      if (poll.start <= last && poll.end >= first) return Holder::baton;
    }
  }
  return Holder::other;
}

struct Classified {
  std::vector<std::vector<Holder>> holders;  // per poll, per process
  std::vector<GpuUsePiece> uses;             // per poll: its three sums (no times)
};

Classified classify(const std::vector<GpuUsePoll>& polls) {
  const OwnRanges ranges = own_ranges(polls);
  Classified c;
  for (const GpuUsePoll& poll : polls) {
    std::vector<Holder>& holders = c.holders.emplace_back();
    GpuUsePiece use;
    for (const GpuProcessShare& p : poll.processes) {
      holders.push_back(holder_of(p, poll, ranges));
      double& sum = holders.back() == Holder::baton   ? use.baton_sm
                    : holders.back() == Holder::other ? use.other_sm
                                                      : use.unresolved_sm;
      sum += p.sm_percent;
    }
    use.baton_sm = std::min(use.baton_sm, kMaxPercent);
    use.other_sm = std::min(use.other_sm, kMaxPercent);
    use.unresolved_sm = std::min(use.unresolved_sm, kMaxPercent);
    c.uses.push_back(use);
  }
  return c;
}

std::vector<GpuUsePiece> pieces_of(const std::vector<GpuUsePoll>& polls, const Classified& c) {
  struct Event {
    double time;
    bool start;
    std::size_t poll;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < polls.size(); ++i) {
    if (!(polls[i].end > polls[i].start)) continue;
    events.push_back({polls[i].start, true, i});
    events.push_back({polls[i].end, false, i});
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.time < b.time; });
  std::set<std::pair<double, std::size_t>> active;  // (other use, poll): the last counts
  std::vector<GpuUsePiece> pieces;
  for (std::size_t i = 0; i < events.size();) {
    const double t = events[i].time;
    for (; i < events.size() && events[i].time == t; ++i) {
      const std::pair key{c.uses[events[i].poll].other_sm, events[i].poll};
      if (events[i].start) {
        active.insert(key);
      } else {
        active.erase(key);
      }
    }
    if (active.empty() || i == events.size()) continue;
    const std::size_t poll = active.rbegin()->second;
    if (!pieces.empty() && pieces.back().poll == poll && pieces.back().end == t) {
      pieces.back().end = events[i].time;
      continue;
    }
    GpuUsePiece piece = c.uses[poll];
    piece.start = t;
    piece.end = events[i].time;
    piece.poll = poll;
    pieces.push_back(piece);
  }
  return pieces;
}

Spans llm_busy_spans(const std::vector<BusyInterval>& intervals) {
  Spans spans;
  for (const BusyInterval& interval : intervals) {
    if (interval.kind == "embed" || !(interval.end > interval.start)) continue;
    spans.emplace_back(interval.start, interval.end);
  }
  std::sort(spans.begin(), spans.end());
  return join_spans(spans, 0.0);
}

// Sums over the sampled busy time, each use weighted by seconds.
struct Sums {
  double seconds = 0.0;
  double baton = 0.0, other = 0.0, unresolved = 0.0;
  double other_busy = 0.0, unresolved_busy = 0.0;  // seconds at or above the threshold
  double other_max = 0.0, unresolved_max = 0.0;
  std::map<std::pair<std::int64_t, std::string>, double> by_other;  // sm-seconds
};

void add(Sums& sums, const GpuUsePiece& piece, double seconds, const GpuUsePoll& poll,
         const std::vector<Holder>& holders, double threshold) {
  sums.seconds += seconds;
  sums.baton += seconds * piece.baton_sm;
  sums.other += seconds * piece.other_sm;
  sums.unresolved += seconds * piece.unresolved_sm;
  if (piece.other_sm >= threshold) sums.other_busy += seconds;
  if (piece.unresolved_sm >= threshold) sums.unresolved_busy += seconds;
  sums.other_max = std::max(sums.other_max, piece.other_sm);
  sums.unresolved_max = std::max(sums.unresolved_max, piece.unresolved_sm);
  for (std::size_t i = 0; i < poll.processes.size(); ++i) {
    if (holders[i] != Holder::other) continue;
    const GpuProcessShare& p = poll.processes[i];
    sums.by_other[{p.pid, p.process}] += seconds * p.sm_percent;
  }
}

}  // namespace

std::vector<GpuUsePiece> gpu_use_pieces(const std::vector<GpuUsePoll>& polls) {
  return pieces_of(polls, classify(polls));
}

std::optional<GpuClients> measure_gpu_clients(const ExposureInput& input,
                                              double threshold_sm_percent) {
  if (input.gpu_polls.empty()) return std::nullopt;
  const Classified classified = classify(input.gpu_polls);
  const std::vector<GpuUsePiece> pieces = pieces_of(input.gpu_polls, classified);
  const Spans busy = llm_busy_spans(input.intervals);
  GpuClients g;
  g.threshold_sm_percent = threshold_sm_percent;
  for (const auto& [start, end] : busy) g.busy_hours += (end - start) / kSecondsPerHour;
  Sums sums;
  // Both lists are sorted and non-overlapping: one pass over their intersections.
  for (std::size_t i = 0, j = 0; i < pieces.size() && j < busy.size();) {
    const double from = std::max(pieces[i].start, busy[j].first);
    const double to = std::min(pieces[i].end, busy[j].second);
    if (to > from) {
      const std::size_t poll = pieces[i].poll;
      add(sums, pieces[i], to - from, input.gpu_polls[poll], classified.holders[poll],
          threshold_sm_percent);
    }
    if (pieces[i].end < busy[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  for (const GpuUsePoll& poll : input.gpu_polls) {
    if (!poll.host_pids && !poll.processes.empty()) g.unresolved = true;
  }
  g.sampled_busy_hours = sums.seconds / kSecondsPerHour;
  if (sums.seconds <= 0.0) return g;
  g.baton_mean_sm = sums.baton / sums.seconds;
  g.other_mean_sm = sums.other / sums.seconds;
  g.other_max_sm = sums.other_max;
  g.other_busy_share = sums.other_busy / sums.seconds;
  g.unresolved_mean_sm = sums.unresolved / sums.seconds;
  g.unresolved_max_sm = sums.unresolved_max;
  g.unresolved_busy_share = sums.unresolved_busy / sums.seconds;
  for (const auto& [key, sm_seconds] : sums.by_other) {
    g.top_others.push_back({key.first, key.second, sm_seconds / sums.seconds});
  }
  std::stable_sort(g.top_others.begin(), g.top_others.end(), [](const auto& a, const auto& b) {
    return a.mean_sm_percent > b.mean_sm_percent;
  });
  if (g.top_others.size() > kTopOthers) g.top_others.resize(kTopOthers);
  return g;
}

std::string other_client_state(const GpuUsePiece& piece, double threshold_sm_percent) {
  if (piece.other_sm >= threshold_sm_percent) return "busy";
  if (piece.unresolved_sm >= threshold_sm_percent) return "unresolved";
  return "idle";
}

}  // namespace baton
