// Exposure sums checked against hand-drawn timelines (times in seconds, hours = s / 3600).
#include "baton/analysis/exposure.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

constexpr double kH = 3600.0;

BusyInterval busy(std::string engine, double start, double end,
                  std::optional<std::int64_t> context = std::nullopt, std::string kind = "") {
  return {.engine = std::move(engine),
          .start = start,
          .end = end,
          .context_tokens = context,
          .kind = std::move(kind)};
}

const EngineExposure& row(const Exposure& e, const std::string& engine) {
  for (const EngineExposure& r : e.by_engine) {
    if (r.engine == engine) return r;
  }
  throw std::out_of_range(engine);
}

TEST(Exposure, TwoEnginesOverlappingByHalfAnHour) {
  // A busy [0, 1 h), B busy [0.5 h, 1.5 h): busy 1.5 h, dual 0.5 h, each 0.5 h alone.
  ExposureInput in{
      .intervals = {busy("A", 0, kH), busy("B", 0.5 * kH, 1.5 * kH)},
      .hangs = {
          {.time = 100, .engine = "A", .error_class = "hang"},   // A alone
          {.time = 2000, .engine = "A", .error_class = "hang"},  // dual
          {.time = 4000, .engine = "", .error_class = "hang"},   // unattributed, B alone
          {.time = 4000, .engine = "A", .error_class = "hang"},  // blamed on A, which is idle then
          {.time = 6000, .engine = "B", .error_class = "hang"}}};  // nobody busy
  const Exposure e = measure_exposure(in, 32768);
  EXPECT_DOUBLE_EQ(e.busy_hours, 1.5);
  EXPECT_DOUBLE_EQ(e.dual_hours, 0.5);
  EXPECT_DOUBLE_EQ(row(e, "A").alone_hours, 0.5);
  EXPECT_DOUBLE_EQ(row(e, "A").with_others_hours, 0.5);
  EXPECT_DOUBLE_EQ(row(e, "B").alone_hours, 0.5);
  EXPECT_DOUBLE_EQ(row(e, "B").with_others_hours, 0.5);
  EXPECT_EQ(row(e, "A").alone_hangs, 1);
  EXPECT_EQ(row(e, "A").with_others_hangs, 1);
  EXPECT_EQ(row(e, "B").alone_hangs + row(e, "B").with_others_hangs, 0);
  ASSERT_EQ(e.hangs.size(), 5u);
  EXPECT_EQ(e.hangs[0].busy_engines, 1);
  EXPECT_EQ(e.hangs[1].busy_engines, 2);
  EXPECT_EQ(e.hangs[2].busy_engines, 1);
  EXPECT_FALSE(e.hangs[3].blamed_busy);
  EXPECT_EQ(e.hangs[4].busy_engines, 0);
}

TEST(Exposure, OverlappingIntervalsOfOneEngineCountOnce) {
  // A batch: two requests of A overlap; their union is [0, 150 s). No other engine: no dual.
  const Exposure e = measure_exposure({{busy("A", 0, 100), busy("A", 50, 150)}, {}}, 32768);
  EXPECT_DOUBLE_EQ(e.busy_hours, 150 / kH);
  EXPECT_DOUBLE_EQ(e.dual_hours, 0.0);
  EXPECT_DOUBLE_EQ(row(e, "A").alone_hours, 150 / kH);
  EXPECT_DOUBLE_EQ(row(e, "A").with_others_hours, 0.0);
}

TEST(Exposure, TouchingIntervalsOfTwoEnginesHaveNoDualTime) {
  // Half-open intervals: A ends at 10 s exactly when B starts. A hang at 10 s is B's alone.
  const Exposure e =
      measure_exposure({{busy("A", 0, 10), busy("B", 10, 20)}, {{10, "B", "hang"}}}, 32768);
  EXPECT_DOUBLE_EQ(e.busy_hours, 20 / kH);
  EXPECT_DOUBLE_EQ(e.dual_hours, 0.0);
  EXPECT_EQ(e.hangs[0].busy_engines, 1);
  EXPECT_EQ(row(e, "B").alone_hangs, 1);
}

TEST(Exposure, IntervalsAcrossMidnightCountWhole) {
  // 2024-11-30T23:30:00Z = 1733009400 (date -u -d ... +%s); both engines busy from 23:30
  // to 00:30 the next day: one dual hour, not split at midnight.
  const double t0 = 1733009400.0;
  const Exposure e =
      measure_exposure({{busy("A", t0, t0 + kH), busy("B", t0, t0 + kH)}, {}}, 32768);
  EXPECT_NEAR(e.busy_hours, 1.0, 1e-9);
  EXPECT_NEAR(e.dual_hours, 1.0, 1e-9);
}

TEST(Exposure, LongContextCountsEnginesBusyWithLongRequests) {
  // A long [0, 100), B long [50, 150), B short [150, 200): two long on [50, 100) = 50 s,
  // exactly one long on [0, 50) and [100, 150) = 100 s.
  ExposureInput in{
      .intervals = {busy("A", 0, 100, 40000), busy("B", 50, 150, 50000), busy("B", 150, 200, 10)},
      .hangs = {{.time = 60, .engine = "A", .error_class = "hang"},
                {.time = 120, .engine = "B", .error_class = "hang"},
                {.time = 160, .engine = "B", .error_class = "hang"}}};
  const Exposure e = measure_exposure(in, 32768);
  EXPECT_DOUBLE_EQ(e.long_context.two_or_more_hours, 50 / kH);
  EXPECT_DOUBLE_EQ(e.long_context.exactly_one_hours, 100 / kH);
  EXPECT_EQ(e.long_context.two_or_more_hangs, 1);
  EXPECT_EQ(e.long_context.exactly_one_hangs, 1);
  EXPECT_EQ(e.long_context.threshold, 32768);
}

TEST(Exposure, EmbeddingWorkIsNotLlmExposure) {
  const Exposure e = measure_exposure(
      {{busy("A", 0, 100, std::nullopt, "decode"), busy("E", 0, 100, std::nullopt, "embed")}, {}},
      32768);
  EXPECT_DOUBLE_EQ(e.busy_hours, 100 / kH);
  EXPECT_DOUBLE_EQ(e.dual_hours, 0.0);
  EXPECT_EQ(e.by_engine.size(), 1u);
}

TEST(Exposure, NothingAtAll) {
  const Exposure e = measure_exposure({}, 32768);
  EXPECT_EQ(e.busy_hours, 0.0);
  EXPECT_TRUE(e.by_engine.empty());
  EXPECT_TRUE(e.hangs.empty());
}

}  // namespace
}  // namespace baton
