// The exposure counters of /metrics: busy seconds by the engines' state and faults with
// the state where they began, counted only once nothing can still arrive before the
// horizon, and the same totals however the scrapes cut the time.
#include "baton/server/observe/exposure_counters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <sstream>
#include <thread>
#include <vector>

namespace baton {
namespace {

using std::chrono::milliseconds;

// The value of the series whose line starts with `series` ("name{labels}"); -1 if none.
double value_of(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1.0;
}

constexpr const char* kAlone =
    R"(baton_exposure_seconds_total{busy="1",prefill_in_flight="false",long_context="false",policy="serialize/op",backend="cpu"})";
constexpr const char* kDualPrefill =
    R"(baton_exposure_seconds_total{busy="2",prefill_in_flight="true",long_context="false",policy="serialize/op",backend="cpu"})";
constexpr const char* kHangInDual =
    R"(baton_exposure_faults_total{class="hang",engine="b",busy="2",prefill_in_flight="true",long_context="false",policy="serialize/op",backend="cpu"})";

class ExposureCountersTest : public ::testing::Test {
 protected:
  TimePoint at(int ms) const { return t0_ + milliseconds(ms); }
  BurstRecord burst(const char* engine, BurstKind kind, int from, int to) const {
    BurstRecord b;
    b.engine = engine;
    b.kind = kind;
    b.context_tokens = 100;
    b.asked = at(from);
    b.granted = at(from);
    b.done = at(to);
    return b;
  }
  // a decodes over [0, 10 s); b prefills over [4 s, 6 s); b hangs, beginning at 5 s.
  void feed(ExposureCounters& counters) const {
    counters.burst_done(burst("a", BurstKind::decode, 0, 10000));
    counters.burst_done(burst("b", BurstKind::prefill, 4000, 6000));
    FaultEvent hang;
    hang.kind = FaultKind::hang;
    hang.engine = "b";
    hang.time = at(7000);
    hang.onset = at(5000);
    counters.fault(hang);
  }
  const TimePoint t0_ = Clock::now();
  const ExposureCounters::Options options_{.policy = "serialize/op",
                                           .backend = "cpu",
                                           .long_context = 32768,
                                           .settle_after = milliseconds(5000),
                                           .engines = {},
                                           .start_unix = 0.0,
                                           .other_policies = {"concurrent"}};
};

TEST_F(ExposureCountersTest, BusySecondsAndFaultsByState) {
  ExposureCounters counters(options_, t0_);
  feed(counters);
  std::string text;
  counters.render(text, at(20000));  // settled up to 15 s: everything
  EXPECT_NEAR(value_of(text, kAlone), 8.0, 1e-6);
  EXPECT_NEAR(value_of(text, kDualPrefill), 2.0, 1e-6);
  EXPECT_EQ(value_of(text, kHangInDual), 1.0);
  EXPECT_NE(text.find("# TYPE baton_exposure_seconds_total counter"), std::string::npos);
}

TEST_F(ExposureCountersTest, ScrapesCountOnlyTheSettledPastAndAddUpTheSame) {
  ExposureCounters counters(options_, t0_);
  feed(counters);
  std::string early;
  counters.render(early, at(10000));  // settled up to 5 s: a alone 4 s, dual 1 s, no hang yet
  EXPECT_NEAR(value_of(early, kAlone), 4.0, 1e-6);
  EXPECT_NEAR(value_of(early, kDualPrefill), 1.0, 1e-6);
  EXPECT_EQ(value_of(early, kHangInDual), -1.0);
  std::string later;
  counters.render(later, at(20000));
  EXPECT_NEAR(value_of(later, kAlone), 8.0, 1e-6);
  EXPECT_NEAR(value_of(later, kDualPrefill), 2.0, 1e-6);
  EXPECT_EQ(value_of(later, kHangInDual), 1.0);
}

TEST_F(ExposureCountersTest, AFaultWhileNothingIsBusyIsBusyZero) {
  ExposureCounters counters(options_, t0_);
  FaultEvent other;
  other.kind = FaultKind::other;
  other.time = at(1000);
  counters.fault(other);
  std::string text;
  counters.render(text, at(10000));
  EXPECT_EQ(
      value_of(
          text,
          R"(baton_exposure_faults_total{class="other",engine="",busy="0",prefill_in_flight="false",long_context="false",policy="serialize/op",backend="cpu"})"),
      1.0);
}

// Engines report from their own threads while /metrics renders from another: every burst
// is counted once, whatever the interleaving. Four engines each report 200 bursts of 1 s,
// one after another (engine e's burst i covers [i, i + 1) s plus e ms), while a scraper
// renders at the slowest engine's progress (as on a server, the horizon trails every
// report by the settle time), settling as it goes; the last render, past every burst,
// holds their union, 200 s and 3 ms. Run under ThreadSanitizer by `make test-tsan`.
TEST_F(ExposureCountersTest, ThreadsReportWhileAScraperRenders) {
  ExposureCounters counters(options_, t0_);
  std::array<std::atomic<int>, 4> reported{};  // bursts each engine has reported
  std::vector<std::thread> engines;
  for (int e = 0; e < 4; ++e) {
    engines.emplace_back([&, e] {
      const std::string name = "e" + std::to_string(e);
      for (int i = 0; i < 200; ++i) {
        BurstRecord b = burst(name.c_str(), BurstKind::decode, i * 1000 + e, (i + 1) * 1000 + e);
        b.request_id = static_cast<std::uint64_t>(i);  // no merging: each its own request
        counters.burst_done(b);
        ++reported[static_cast<std::size_t>(e)];
      }
    });
  }
  std::thread scraper([&] {
    for (int slowest = 0; slowest < 200;) {
      slowest = 200;
      for (const auto& r : reported) slowest = std::min(slowest, r.load());
      std::string text;
      counters.render(text, at(slowest * 1000));
      std::this_thread::yield();
    }
  });
  for (std::thread& t : engines) t.join();
  scraper.join();
  std::string text;
  counters.render(text, at(300000));
  double total = 0.0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("baton_exposure_seconds_total{", 0) == 0) {
      total += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  EXPECT_NEAR(total, 200.003, 1e-6);  // the union: [0 s, 200 s + 3 ms)
}

TEST_F(ExposureCountersTest, BurstsAfterAPolicyChangeCountUnderTheNewPolicy) {
  ExposureCounters counters(options_, t0_);
  const std::string concurrent_alone =
      R"(baton_exposure_seconds_total{busy="1",prefill_in_flight="false",long_context="false",policy="concurrent",backend="cpu"})";
  std::string text;
  counters.render(text, at(0));
  EXPECT_EQ(value_of(text, concurrent_alone), 0.0);  // the other arm's series from the start
  counters.burst_done(burst("a", BurstKind::decode, 0, 3000));
  counters.set_policy("concurrent");
  counters.burst_done(burst("a", BurstKind::decode, 4000, 10000));
  text.clear();
  counters.render(text, at(20000));
  EXPECT_NEAR(value_of(text, kAlone), 3.0, 1e-6);
  EXPECT_NEAR(value_of(text, concurrent_alone), 6.0, 1e-6);
}

}  // namespace
}  // namespace baton
