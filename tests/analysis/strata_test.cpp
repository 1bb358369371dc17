// Strata of busy time: hand-made intervals whose states are known to the second, hangs
// placed in them, several hosts merged, and the regression table built from them.
#include "baton/analysis/strata.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace baton {
namespace {

const std::set<std::string> kHangs{"hang", "timeout"};

// 0-3600 s: a alone decoding. 3600-5400: b prefills a long prompt beside a. 5400-7200: b
// alone. 7200-9000: c embeds (not LLM work). Hangs at 1000 (a alone), 4000 (dual, prefill,
// long), 6000 (b alone, a timeout) and 8000 (idle: only the embedding engine).
ExposureInput strata_example() {
  ExposureInput input;
  input.intervals = {{"a", 0, 5400, 100, "decode"},
                     {"b", 3600, 5400, 40000, "prefill"},
                     {"b", 5400, 7200, 40000, "decode"},
                     {"c", 7200, 9000, 10, "embed"}};
  input.hangs = {{1000, "a", "hang"},
                 {4000, "b", "hang"},
                 {6000, "b", "timeout"},
                 {8000, "c", "hang"},
                 {1500, "a", "crash"}};
  return input;
}

TEST(Strata, SplitBusyTimeAndHangsByState) {
  const Strata strata = stratify(strata_example(), 32768, kHangs, "h1");
  ASSERT_EQ(strata.strata.size(), 3u);
  // Sorted by state: (1, no prefill, short), (1, no prefill, long), (2, prefill, long).
  const Stratum& alone_short = strata.strata[0];
  EXPECT_EQ(alone_short.state.busy, 1);
  EXPECT_FALSE(alone_short.state.long_context);
  EXPECT_DOUBLE_EQ(alone_short.hours, 1.0);
  EXPECT_EQ(alone_short.hangs, 1);  // the crash is not a counted class
  const Stratum& alone_long = strata.strata[1];
  EXPECT_TRUE(alone_long.state.long_context);
  EXPECT_FALSE(alone_long.state.prefill_in_flight);
  EXPECT_DOUBLE_EQ(alone_long.hours, 0.5);
  EXPECT_EQ(alone_long.hangs, 1);
  const Stratum& dual = strata.strata[2];
  EXPECT_EQ(dual.state.busy, 2);
  EXPECT_TRUE(dual.state.prefill_in_flight);
  EXPECT_TRUE(dual.state.long_context);
  EXPECT_DOUBLE_EQ(dual.hours, 0.5);
  EXPECT_EQ(dual.hangs, 1);
  EXPECT_EQ(strata.hangs_while_idle, 1);
  EXPECT_EQ(dual.state.host, "h1");
}

TEST(Strata, HostsMergeIntoOneTableWithAHostColumn) {
  const Strata fleet = merge_strata({stratify(strata_example(), 32768, kHangs, "h1"),
                                     stratify(strata_example(), 32768, kHangs, "h2")});
  EXPECT_EQ(fleet.strata.size(), 6u);
  EXPECT_EQ(fleet.hangs_while_idle, 2);
  const PoissonDesign design = design_for(fleet, {Factor::dual, Factor::host});
  ASSERT_EQ(design.columns, (std::vector<std::string>{"dual", "host=h2"}));
  ASSERT_EQ(design.terms.size(), 2u);
  ASSERT_EQ(design.cells.size(), 4u);  // dual x host
  double hours = 0;
  std::int64_t hangs = 0;
  for (const PoissonCell& cell : design.cells) {
    hours += cell.hours;
    hangs += cell.events;
  }
  EXPECT_DOUBLE_EQ(hours, 4.0);
  EXPECT_EQ(hangs, 6);
}

TEST(Strata, BusyIsAThreeLevelFactor) {
  ExposureInput input;
  input.intervals = {{"a", 0, 3600, std::nullopt, "decode"},
                     {"b", 0, 3600, std::nullopt, "decode"},
                     {"c", 1800, 3600, std::nullopt, "decode"},
                     {"d", 2700, 3600, std::nullopt, "decode"}};
  const PoissonDesign design = design_for(stratify(input, 32768, kHangs, ""), {Factor::busy});
  EXPECT_EQ(design.columns, (std::vector<std::string>{"busy=2", "busy=3+"}));
  ASSERT_EQ(design.cells.size(), 2u);  // 2 busy for 0.5 h; 3 and 4 busy (3+) for 0.5 h
  EXPECT_DOUBLE_EQ(design.cells[0].hours + design.cells[1].hours, 1.0);
  for (const PoissonCell& cell : design.cells) EXPECT_DOUBLE_EQ(cell.hours, 0.5);
}

// The table lists each factor's levels in their order, whatever the order of the columns'
// zeros and ones (before: busy=1, busy=3+, busy=2; the days likewise out of order), hosts
// in natural order (h2 before h10), and each factor names its reference level.
TEST(Strata, LevelsComeInTheirOrderAndNameTheirReference) {
  ExposureInput input;
  for (int day = 0; day < 3; ++day) {
    const double t = 1732924800.0 + 86400.0 * day;  // 2024-11-30 on
    input.intervals.push_back({"a", t, t + 3600, std::nullopt, "decode"});
    input.intervals.push_back({"b", t + 1800, t + 3600, std::nullopt, "decode"});
    input.intervals.push_back({"c", t + 2700, t + 3600, std::nullopt, "decode"});
  }
  const Strata strata = stratify(input, 32768, kHangs, "");
  const PoissonDesign by_day = design_for(strata, {Factor::day});
  EXPECT_EQ(by_day.terms[0].reference, "day=2024-11-30");
  ASSERT_EQ(by_day.cells.size(), 3u);
  EXPECT_EQ(by_day.cells[0].covariates, (std::vector<double>{0, 0}));
  EXPECT_EQ(by_day.cells[1].covariates, (std::vector<double>{1, 0}));  // day=2024-12-01
  EXPECT_EQ(by_day.cells[2].covariates, (std::vector<double>{0, 1}));
  const PoissonDesign by_busy = design_for(strata, {Factor::busy});
  EXPECT_EQ(by_busy.terms[0].reference, "busy=1");
  ASSERT_EQ(by_busy.cells.size(), 3u);
  EXPECT_EQ(by_busy.cells[1].covariates, (std::vector<double>{1, 0}));  // busy=2
  EXPECT_EQ(by_busy.cells[2].covariates, (std::vector<double>{0, 1}));  // busy=3+

  std::vector<Strata> hosts;
  for (const char* host : {"h10", "h2", "h1"}) {
    hosts.push_back(stratify(input, 32768, kHangs, host));
  }
  const PoissonDesign by_host = design_for(merge_strata(hosts), {Factor::host});
  EXPECT_EQ(by_host.terms[0].reference, "host=h1");
  EXPECT_EQ(by_host.columns, (std::vector<std::string>{"host=h2", "host=h10"}));
}

// Two engines in one-minute slots (busy with p 0.5, a busy slot a prefill with p 0.3), so
// that prefills are in flight more often in dual time; hangs at 2 an hour while `cause`
// holds and 0.2 otherwise (bench/simulated_ledger writes the same as a ledger).
ExposureInput simulated(Factor cause, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::bernoulli_distribution busy(0.5), prefill(0.3);
  ExposureInput input;
  for (double slot = 0; slot < 300 * 3600.0; slot += 60.0) {
    bool any = false, both = true, prefilling = false;
    for (const char* engine : {"a", "b"}) {
      if (!busy(random)) {
        both = false;
        continue;
      }
      any = true;
      const bool is_prefill = prefill(random);
      prefilling = prefilling || is_prefill;
      input.intervals.push_back({engine, slot, slot + 60, 1000, is_prefill ? "prefill" : "decode"});
    }
    if (!any) continue;
    const bool on = cause == Factor::dual ? both : prefilling;
    const int count = std::poisson_distribution<int>((on ? 2.0 : 0.2) / 60.0)(random);
    for (int i = 0; i < count; ++i) input.hangs.push_back({slot + 30.0, "a", "hang"});
  }
  return input;
}

TEST(Strata, TheRegressionNamesTheFactorSimulatedHangsDependOn) {
  for (const Factor cause : {Factor::dual, Factor::prefill_in_flight}) {
    SCOPED_TRACE(std::string(to_string(cause)));
    const PoissonDesign design = design_for(stratify(simulated(cause, 3), 32768, kHangs, ""),
                                            {Factor::dual, Factor::prefill_in_flight});
    const PoissonFit fit = fit_poisson(design);
    const std::size_t on = cause == Factor::dual ? 0 : 1;
    EXPECT_LT(fit.tests[on].p_value, 1e-10);
    EXPECT_GT(*fit.coefficients[on + 1].low, 5.0);  // true ratio 10
    // The other factor, whose true ratio is 1: not significant at 1 %, and near 1.
    EXPECT_GT(fit.tests[1 - on].p_value, 0.01);
    EXPECT_GT(*fit.coefficients[2 - on].ratio, 0.5);
    EXPECT_LT(*fit.coefficients[2 - on].ratio, 2.0);
  }
}

// Runs of two policies, one before and one across midnight: each stretch takes its run's
// policy ("mixed" while both are busy) and is split at 00:00 UTC into its two days.
TEST(Strata, PolicyBackendAndDayComeFromTheRunsAndTheClock) {
  const double midnight = 1732924800;  // 2024-11-30T00:00:00Z
  ExposureInput input;
  input.intervals = {{"a", midnight - 7200, midnight - 1800, 64, "decode", "concurrent", "cuda"},
                     {"b", midnight - 3600, midnight + 3600, 64, "decode", "serialize", "cuda"}};
  input.hangs = {{midnight - 600, "b", "hang"}, {midnight + 600, "b", "hang"}};
  const Strata strata = stratify(input, 32768, kHangs, "");
  std::map<std::pair<std::string, std::string>, double> hours;  // (policy, day) -> hours
  for (const Stratum& s : strata.strata) {
    EXPECT_EQ(s.state.backend, "cuda");
    hours[{s.state.policy, s.state.day}] += s.hours;
  }
  EXPECT_DOUBLE_EQ((hours[{"concurrent", "2024-11-29"}]), 1.0);
  EXPECT_DOUBLE_EQ((hours[{"mixed", "2024-11-29"}]), 0.5);
  EXPECT_DOUBLE_EQ((hours[{"serialize", "2024-11-29"}]), 0.5);
  EXPECT_DOUBLE_EQ((hours[{"serialize", "2024-11-30"}]), 1.0);
  const PoissonDesign design = design_for(strata, {Factor::policy, Factor::day});
  EXPECT_EQ(design.columns,
            (std::vector<std::string>{"policy=mixed", "policy=serialize", "day=2024-11-30"}));
}

// Two runs on two driver versions: busy time splits by driver, "mixed" while both ran.
TEST(Strata, DriverComesFromTheRuns) {
  ExposureInput input;
  input.intervals = {{"a", 0, 3600, 64, "decode", "serialize", "cuda", "570.86.15"},
                     {"b", 3600, 9000, 64, "decode", "serialize", "cuda", "580.159.04"},
                     {"c", 8100, 9000, 64, "decode", "serialize", "cuda", "570.86.15"}};
  input.hangs = {{100, "a", "hang"}, {5000, "b", "hang"}};
  const Strata strata = stratify(input, 32768, kHangs, "");
  std::map<std::string, std::pair<double, std::int64_t>> by_driver;  // hours, hangs
  for (const Stratum& s : strata.strata) {
    by_driver[s.state.driver].first += s.hours;
    by_driver[s.state.driver].second += s.hangs;
  }
  EXPECT_DOUBLE_EQ(by_driver["570.86.15"].first, 1.0);
  EXPECT_DOUBLE_EQ(by_driver["580.159.04"].first, 1.25);
  EXPECT_DOUBLE_EQ(by_driver["mixed"].first, 0.25);
  EXPECT_EQ(by_driver["570.86.15"].second, 1);
  EXPECT_EQ(by_driver["580.159.04"].second, 1);
  const PoissonDesign design = design_for(strata, {Factor::driver});
  EXPECT_EQ(design.columns, (std::vector<std::string>{"driver=580.159.04", "driver=mixed"}));
}

// Engine a busy [0, 3600). Polls: [0, 1800) another process at 50 % SM (busy), [1800,
// 2700) nothing (idle); none after 2700 (unsampled). A hang in each: 0.5 h, 0.25 h and
// 0.25 h, one hang each; idle is the regression's reference.
TEST(Strata, OtherGpuClientComesFromThePolls) {
  ExposureInput input;
  input.intervals = {{"a", 0, 3600, 64, "decode"}};
  input.hangs = {{100, "a", "hang"}, {2000, "a", "hang"}, {3000, "a", "hang"}};
  input.gpu_polls = {{1, 0, 1800, true, {{4242, "omlx", false, 50.0, 10.0}}},
                     {1, 1800, 2700, true, {}}};
  const Strata strata = stratify(input, 32768, kHangs, "");
  std::map<std::string, std::pair<double, std::int64_t>> by_client;  // hours, hangs
  for (const Stratum& s : strata.strata) {
    by_client[s.state.other_gpu_client].first += s.hours;
    by_client[s.state.other_gpu_client].second += s.hangs;
  }
  ASSERT_EQ(by_client.size(), 3u);
  EXPECT_DOUBLE_EQ(by_client["busy"].first, 0.5);
  EXPECT_DOUBLE_EQ(by_client["idle"].first, 0.25);
  EXPECT_DOUBLE_EQ(by_client["unsampled"].first, 0.25);
  for (const char* level : {"busy", "idle", "unsampled"}) EXPECT_EQ(by_client[level].second, 1);
  const PoissonDesign design = design_for(strata, {Factor::other_gpu_client});
  EXPECT_EQ(design.columns,
            (std::vector<std::string>{"other_gpu_client=busy", "other_gpu_client=unsampled"}));
  // Above the threshold only: at 60 % the first half hour is idle too.
  const Strata higher = stratify(input, 32768, kHangs, "", 60.0);
  double busy_hours = 0.0;
  for (const Stratum& s : higher.strata) {
    if (s.state.other_gpu_client == "busy") busy_hours += s.hours;
  }
  EXPECT_EQ(busy_hours, 0.0);
}

// A source without polls says nothing: one empty level, no column.
TEST(Strata, NoPollsNoOtherGpuClientLevels) {
  const Strata strata = stratify(strata_example(), 32768, kHangs, "");
  for (const Stratum& s : strata.strata) EXPECT_EQ(s.state.other_gpu_client, "");
  EXPECT_TRUE(design_for(strata, {Factor::other_gpu_client}).columns.empty());
}

TEST(Strata, FactorsHaveNames) {
  for (const char* name : {"busy", "dual", "prefill_in_flight", "long_context", "host", "policy",
                           "backend", "driver", "other_gpu_client", "day"}) {
    ASSERT_TRUE(parse_factor(name).has_value()) << name;
    EXPECT_EQ(to_string(*parse_factor(name)), name);
  }
  EXPECT_FALSE(parse_factor("weather").has_value());
}

}  // namespace
}  // namespace baton
