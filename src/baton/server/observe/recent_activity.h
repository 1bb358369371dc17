// RecentActivity: what the dashboard's timeline (GET /v1/timeline) draws, kept in memory
// for the last hour at most: each engine's busy intervals (from asking for the turn to
// completion, as the ledger records them, consecutive bursts merged), and the stretches
// during which two or more streams had work on the device at once (what the overlap meter
// counts). The dual-engine stretches are computed when asked, by a sweep over the
// intervals. Memory is bounded twice: by age (keep_s) and by count (max_intervals per
// engine and for the stream overlap; the oldest go first).
// Thread-safety: every member is thread-safe. burst_done() is called from engine threads,
// stream_busy/idle() from stream threads under their stream's lock (they take one mutex of
// their own and call nothing back), window() from the HTTP threads.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "baton/gpu/stream_observer.h"
#include "baton/ledger/wall_reference.h"
#include "baton/turn/burst_observer.h"

namespace baton {

// [start, end) in Unix seconds.
struct Span {
  double start = 0.0;
  double end = 0.0;
  bool operator==(const Span&) const = default;
};

struct EngineLane {
  std::string engine;
  std::vector<Span> intervals;  // sorted by start, each engine's own overlaps joined
};

struct ActivityWindow {
  double now = 0.0;  // Unix seconds
  std::vector<EngineLane> engines;
  std::vector<Span> overlap;         // two or more engines busy
  std::vector<Span> stream_overlap;  // two or more streams with work in flight
};

struct RecentActivityOptions {
  double keep_s = 3600.0;  // nothing older is kept
  // Bursts of one engine this close (seconds) become one interval: a decode loop is one
  // bar, not thousands.
  double merge_gap_s = 0.05;
  std::size_t max_intervals = 8192;  // per engine, and for the stream overlap
};

class RecentActivity final : public BurstObserver, public StreamObserver {
 public:
  explicit RecentActivity(WallReference wall = {}, RecentActivityOptions options = {});

  void burst_done(const BurstRecord& burst) override;
  void stream_busy(StreamId stream, TimePoint at) override;
  void stream_idle(StreamId stream, TimePoint at) override;

  // The last `seconds` before `now`, clipped to it. `engines` names the lanes in the order
  // to show them (an engine without intervals gets an empty one); engines seen in bursts
  // but not named follow, by name.
  ActivityWindow window(double seconds, const std::vector<std::string>& engines = {},
                        TimePoint now = Clock::now()) const;
  double unix_seconds(TimePoint t) const { return wall_.unix_seconds(t); }

 private:
  // Appends [start, end) to `spans`, joining the last one when it is this close, then
  // drops what is too old or too many.
  void add(std::deque<Span>& spans, Span span, double latest) const;

  const WallReference wall_;
  const RecentActivityOptions options_;

  mutable std::mutex bursts_mu_;
  std::map<std::string, std::deque<Span>> engines_;  // guarded by bursts_mu_

  mutable std::mutex streams_mu_;
  std::map<StreamId, TimePoint> busy_streams_;  // guarded by streams_mu_
  std::optional<double> overlap_since_;         // two or more busy since; guarded
  std::deque<Span> stream_overlap_;             // guarded by streams_mu_
};

// The stretches where at least two of `lanes` hold an interval (each lane's own
// intervals may overlap one another: a lane counts once). Half-open: [0,1) and [1,2) of
// two lanes do not overlap.
std::vector<Span> overlap_of(const std::vector<std::vector<Span>>& lanes);

// `spans` sorted and with overlapping or touching ones joined.
std::vector<Span> union_of(std::vector<Span> spans);

}  // namespace baton
