// RecentActivity (the dashboard's timeline): bursts merged into intervals, the overlap
// sweep against hand-computed stretches, the window clipped and old or surplus intervals
// dropped, streams' overlap, and real threads feeding it while another reads.
#include "baton/server/observe/recent_activity.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace baton {
namespace {

using namespace std::chrono_literals;

BurstRecord burst(const std::string& engine, TimePoint asked, Clock::duration length) {
  BurstRecord record;
  record.engine = engine;
  record.asked = asked;
  record.granted = asked;
  record.done = asked + length;
  return record;
}

const EngineLane& lane(const ActivityWindow& window, const std::string& engine) {
  for (const EngineLane& l : window.engines) {
    if (l.engine == engine) return l;
  }
  static const EngineLane none;
  ADD_FAILURE() << "no lane " << engine;
  return none;
}

TEST(RecentActivity, ConsecutiveBurstsOfAnEngineMergeIntoOneInterval) {
  RecentActivity activity;
  const TimePoint t0 = Clock::now() - 10s;
  activity.burst_done(burst("a", t0, 10ms));
  activity.burst_done(burst("a", t0 + 20ms, 10ms));   // 10 ms after: the same interval
  activity.burst_done(burst("a", t0 + 300ms, 10ms));  // 270 ms after: a new one
  activity.burst_done(burst("b", t0 + 25ms, 10ms));   // another engine: its own lane
  const ActivityWindow w = activity.window(60, {"a", "b"}, t0 + 1s);
  const std::vector<Span> a = lane(w, "a").intervals;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_DOUBLE_EQ(a[0].start, activity.unix_seconds(t0));
  EXPECT_DOUBLE_EQ(a[0].end, activity.unix_seconds(t0 + 30ms));
  EXPECT_DOUBLE_EQ(a[1].start, activity.unix_seconds(t0 + 300ms));
  ASSERT_EQ(lane(w, "b").intervals.size(), 1u);
  // a busy [0, 30 ms) and b [25, 35 ms): both busy from 25 to 30 ms.
  ASSERT_EQ(w.overlap.size(), 1u);
  EXPECT_NEAR(w.overlap[0].start, activity.unix_seconds(t0 + 25ms), 1e-9);
  EXPECT_NEAR(w.overlap[0].end, activity.unix_seconds(t0 + 30ms), 1e-9);
}

TEST(RecentActivity, TheOverlapSweepCountsLanesNotIntervals) {
  // a [0,10) [20,30); b [5,25); c [8,9) inside both: two or more busy on [5,10) and [20,25).
  EXPECT_EQ(overlap_of({{{0, 10}, {20, 30}}, {{5, 25}}, {{8, 9}}}),
            (std::vector<Span>{{.start = 5, .end = 10}, {.start = 20, .end = 25}}));
  // One lane's own overlapping intervals (a batch) are one engine busy, not two.
  EXPECT_TRUE(overlap_of({{{0, 10}, {5, 15}}, {}}).empty());
  // Half-open: touching stretches do not overlap.
  EXPECT_TRUE(overlap_of({{{0, 1}}, {{1, 2}}}).empty());
  // Three lanes that pairwise overlap in a chain: one stretch, not two joined at 4.
  EXPECT_EQ(overlap_of({{{0, 4}}, {{2, 6}}, {{4, 8}}}),
            (std::vector<Span>{{.start = 2, .end = 6}}));
  EXPECT_TRUE(overlap_of({}).empty());
  EXPECT_EQ(union_of({{3, 4}, {0, 2}, {1, 3}, {6, 6}}),
            (std::vector<Span>{{.start = 0, .end = 4}}));
}

TEST(RecentActivity, TheWindowIsClippedAndNamedLanesComeFirst) {
  RecentActivity activity;
  const TimePoint now = Clock::now();
  activity.burst_done(burst("z", now - 100s, 1s));
  activity.burst_done(burst("a", now - 30s, 20s));  // [now-30, now-10): half in a 20 s window
  activity.burst_done(burst("late", now - 5s, 1s));
  const ActivityWindow w = activity.window(20, {"a", "idle"}, now);
  ASSERT_EQ(w.engines.size(), 4u);
  EXPECT_EQ(w.engines[0].engine, "a");
  EXPECT_EQ(w.engines[1].engine, "idle");  // named, never busy: an empty lane
  EXPECT_TRUE(w.engines[1].intervals.empty());
  EXPECT_EQ(w.engines[2].engine, "late");  // then the others, by name
  EXPECT_EQ(w.engines[3].engine, "z");
  EXPECT_TRUE(w.engines[3].intervals.empty());  // 100 s ago: outside the window
  ASSERT_EQ(w.engines[0].intervals.size(), 1u);
  EXPECT_NEAR(w.engines[0].intervals[0].start, w.now - 20, 1e-6);
  EXPECT_NEAR(w.engines[0].intervals[0].end, w.now - 10, 1e-6);
  EXPECT_DOUBLE_EQ(w.now, activity.unix_seconds(now));
}

TEST(RecentActivity, OldAndSurplusIntervalsAreDropped) {
  RecentActivityOptions options;
  options.keep_s = 10;
  options.max_intervals = 3;
  RecentActivity activity({}, options);
  const TimePoint now = Clock::now();
  activity.burst_done(burst("a", now - 30s, 1s));  // older than keep_s once newer ones come
  for (int i = 0; i < 5; ++i) activity.burst_done(burst("a", now - 5s + i * 1s, 100ms));
  const ActivityWindow w = activity.window(3600, {"a"}, now);
  const std::vector<Span>& a = w.engines[0].intervals;
  ASSERT_EQ(a.size(), 3u);  // the last three of five; the old one gone
  EXPECT_NEAR(a[0].start, activity.unix_seconds(now - 3s), 1e-9);
  EXPECT_NEAR(a[2].start, activity.unix_seconds(now - 1s), 1e-9);
  // A window longer than what is kept is cut to it (an interval is dropped only when a
  // newer one comes; the window does not show it meanwhile).
  RecentActivity lone({}, options);
  lone.burst_done(burst("a", now - 15s, 1s));
  EXPECT_TRUE(lone.window(3600, {}, now).engines[0].intervals.empty());
  EXPECT_EQ(lone.window(3600, {}, now - 6s).engines[0].intervals.size(), 1u);
}

TEST(RecentActivity, StreamsOverlapWhileTwoHaveWorkInFlight) {
  RecentActivity activity;
  const TimePoint t0 = Clock::now() - 1s;
  activity.stream_idle(7, t0);  // never seen busy: ignored
  activity.stream_busy(1, t0);
  activity.stream_busy(2, t0 + 1ms);
  activity.stream_busy(3, t0 + 2ms);
  activity.stream_idle(1, t0 + 3ms);  // two still busy
  activity.stream_idle(2, t0 + 4ms);  // one left: the overlap ends
  activity.stream_idle(3, t0 + 5ms);
  activity.stream_busy(1, t0 + 500ms);
  activity.stream_busy(2, t0 + 600ms);  // and overlapping now
  const TimePoint now = t0 + 700ms;
  const ActivityWindow w = activity.window(60, {}, now);
  ASSERT_EQ(w.stream_overlap.size(), 2u);
  EXPECT_NEAR(w.stream_overlap[0].start, activity.unix_seconds(t0 + 1ms), 1e-9);
  EXPECT_NEAR(w.stream_overlap[0].end, activity.unix_seconds(t0 + 4ms), 1e-9);
  EXPECT_NEAR(w.stream_overlap[1].start, activity.unix_seconds(t0 + 600ms), 1e-9);
  EXPECT_NEAR(w.stream_overlap[1].end, w.now, 1e-9);  // open: up to now
}

// Engine threads report bursts (two of them for one engine, interleaved), stream threads
// go busy and idle, and a reader takes windows all along: every window is well formed and
// the last holds every burst.
TEST(RecentActivity, ThreadsFeedItWhileAReaderReads) {
  RecentActivity activity;
  constexpr int kBursts = 500;
  const TimePoint base = Clock::now() - 60s;
  const auto at = [base](int i) { return base + i * 100ms; };  // 90 ms apart: no merge
  std::atomic<bool> done{false};
  std::atomic<int> windows{0};
  std::thread reader([&] {
    do {  // at least once, however fast the writers are
      const ActivityWindow w = activity.window(3600, {"e0", "e1", "e2", "shared"});
      for (const EngineLane& l : w.engines) {
        for (std::size_t i = 0; i < l.intervals.size(); ++i) {
          ASSERT_LT(l.intervals[i].start, l.intervals[i].end);
          if (i > 0) {
            ASSERT_LT(l.intervals[i - 1].end, l.intervals[i].start);
          }
        }
      }
      windows.fetch_add(1);
    } while (!done.load());
  });
  std::vector<std::thread> writers;
  for (int e = 0; e < 3; ++e) {
    writers.emplace_back([&, e] {
      for (int i = 0; i < kBursts; ++i) {
        activity.burst_done(burst("e" + std::to_string(e), at(i), 10ms));
      }
    });
  }
  for (int parity = 0; parity < 2; ++parity) {
    writers.emplace_back([&, parity] {
      for (int i = parity; i < kBursts; i += 2) activity.burst_done(burst("shared", at(i), 10ms));
    });
  }
  for (StreamId s = 1; s <= 2; ++s) {
    writers.emplace_back([&, s] {
      for (int i = 0; i < kBursts; ++i) {
        activity.stream_busy(s, at(i));
        activity.stream_idle(s, at(i) + 5ms);
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  EXPECT_GT(windows.load(), 0);
  const ActivityWindow w = activity.window(3600, {"e0", "e1", "e2", "shared"});
  for (const EngineLane& l : w.engines) EXPECT_EQ(l.intervals.size(), kBursts) << l.engine;
  // All four engines busy at the same 10 ms of every 100: one overlap stretch per burst.
  ASSERT_EQ(w.overlap.size(), kBursts);
  EXPECT_NEAR(w.overlap[0].start, activity.unix_seconds(at(0)), 1e-6);
  EXPECT_NEAR(w.overlap[0].end, activity.unix_seconds(at(0) + 10ms), 1e-6);
  for (const Span& s : w.stream_overlap) EXPECT_LE(s.start, s.end);
}

}  // namespace
}  // namespace baton
