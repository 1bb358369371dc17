#include "baton/ledger/stream_recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <tuple>

#include "baton/analysis/stream_exposure.h"
#include "baton/ledger/ledger_reader.h"
#include "baton/ledger/sqlite.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::TempLedgerPath;

// Drives a StreamRecorder with made-up transitions and reads back what it wrote.
class StreamRecorderTest : public ::testing::Test {
 protected:
  // Seconds after the run's start, on the recorder's clock.
  TimePoint at(double ms) const {
    return zero_ + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double, std::milli>(ms));
  }
  std::vector<StreamInterval> written() {
    recorder_.finish();
    ledger_.flush();
    return *read_ledger(file_.path()).input.stream_intervals;
  }
  // A written interval's bounds in ms after zero_.
  std::pair<double, double> ms(const StreamInterval& i) const {
    const double start_s = wall_.unix_seconds(zero_);
    return {(i.start - start_s) * 1e3, (i.end - start_s) * 1e3};
  }

  TempLedgerPath file_;
  Ledger ledger_{file_.path()};
  std::int64_t run_ = ledger_.begin_run({.start = 1.0,
                                         .version = "test",
                                         .backend = "cpu",
                                         .policy = "serialize/layer",
                                         .streams_recorded = true});
  WallReference wall_;
  TimePoint zero_ = Clock::now();
  StreamRecorder recorder_{ledger_, run_, wall_};
};

TEST_F(StreamRecorderTest, EveryBusyStretchIsAnIntervalNamedAfterItsStream) {
  recorder_.name_stream(1, "decode");
  recorder_.stream_busy(1, at(0));
  recorder_.stream_busy(2, at(1));
  recorder_.stream_idle(1, at(3));
  recorder_.stream_idle(2, at(4));
  const auto rows = written();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].stream, "decode");
  EXPECT_EQ(rows[1].stream, "stream-2");  // never named
  EXPECT_NEAR(ms(rows[0]).first, 0.0, 1e-3);
  EXPECT_NEAR(ms(rows[0]).second, 3.0, 1e-3);
  EXPECT_NEAR(ms(rows[1]).second, 4.0, 1e-3);
}

TEST_F(StreamRecorderTest, AShortGapWithTheDeviceIdleMerges) {
  recorder_.stream_busy(1, at(0));
  recorder_.stream_idle(1, at(2));
  recorder_.stream_busy(1, at(2.5));  // 0.5 ms later, nothing else busy: one interval
  recorder_.stream_idle(1, at(4));
  recorder_.stream_busy(1, at(6));  // 2 ms later: a new one
  recorder_.stream_idle(1, at(7));
  const auto rows = written();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(ms(rows[0]).first, 0.0, 1e-3);
  EXPECT_NEAR(ms(rows[0]).second, 4.0, 1e-3);
  EXPECT_NEAR(ms(rows[1]).first, 6.0, 1e-3);
}

// A hand-over under serialize: stream 1 drains, stream 2 starts, stream 1 goes on. Joining
// stream 1's stretches across the gap would invent dual time.
TEST_F(StreamRecorderTest, NoMergeAcrossAnotherStreamsWork) {
  recorder_.stream_busy(1, at(0));
  recorder_.stream_idle(1, at(2));
  recorder_.stream_busy(2, at(2.1));
  recorder_.stream_idle(2, at(2.3));
  recorder_.stream_busy(1, at(2.4));
  recorder_.stream_idle(1, at(3));
  const auto rows = written();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(measure_stream_exposure(rows).dual_hours, 0.0);
}

TEST_F(StreamRecorderTest, NoMergeWhileAnotherStreamWasBusyAtTheEnd) {
  recorder_.stream_busy(2, at(0));
  recorder_.stream_busy(1, at(1));
  recorder_.stream_idle(1, at(2));
  recorder_.stream_idle(2, at(2.2));  // stream 2 alone in stream 1's gap
  recorder_.stream_busy(1, at(2.5));
  recorder_.stream_idle(1, at(3));
  const auto rows = written();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NEAR(measure_stream_exposure(rows).dual_hours * 3600e3, 1.0, 1e-3);
}

TEST_F(StreamRecorderTest, FinishEndsAStreamStillBusy) {
  recorder_.stream_busy(1, at(0));
  const auto rows = written();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GE(rows[0].end, rows[0].start);
}

TEST_F(StreamRecorderTest, ANewRunCutsTheStretchesBusyAcrossItsStart) {
  recorder_.name_stream(1, "one");
  recorder_.name_stream(2, "two");
  recorder_.stream_busy(1, at(0));
  recorder_.stream_busy(2, at(5));
  recorder_.stream_idle(2, at(8));
  const std::int64_t next = ledger_.begin_run(
      {.start = 2.0, .version = "test", .backend = "cpu", .policy = "concurrent"});
  recorder_.set_run(next, at(10));
  recorder_.stream_idle(1, at(20));
  recorder_.finish();
  ledger_.flush();
  Database db(file_.path(), Database::Mode::read_only);
  Statement rows(db, "SELECT run_id, stream, start, end FROM stream_intervals ORDER BY end");
  std::vector<std::tuple<std::int64_t, std::string, double, double>> got;
  const double zero_s = wall_.unix_seconds(zero_);
  while (rows.step()) {
    got.emplace_back(rows.column_int(0), rows.column_text(1),
                     (rows.column_double(2) - zero_s) * 1e3,
                     (rows.column_double(3) - zero_s) * 1e3);
  }
  ASSERT_EQ(got.size(), 3u);
  const std::vector<std::tuple<std::int64_t, std::string, double, double>> want = {
      {run_, "two", 5, 8}, {run_, "one", 0, 10}, {next, "one", 10, 20}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::get<0>(got[i]), std::get<0>(want[i])) << i;
    EXPECT_EQ(std::get<1>(got[i]), std::get<1>(want[i])) << i;
    EXPECT_NEAR(std::get<2>(got[i]), std::get<2>(want[i]), 1e-3) << i;
    EXPECT_NEAR(std::get<3>(got[i]), std::get<3>(want[i]), 1e-3) << i;
  }
}

}  // namespace
}  // namespace baton
