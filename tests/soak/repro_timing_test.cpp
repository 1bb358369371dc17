// `baton repro` ends on time whatever it injects: a run at an extreme fault rate is over
// within its duration plus the watchdog deadline plus a stated margin. Timing, so a soak
// test (run alone, never under a sanitizer).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace baton {
namespace {

using testing::CommandResult;
using testing::run_baton;

// At any accepted hang rate a run ends within its duration, the watchdog deadline (streams
// hung at the end are reset before the engines stop) and the README's margin of a second;
// 5 s here for a loaded machine. A rate of 1e9 once held the injector's lock for minutes.
TEST(ReproTiming, AHugeHangRateStillEndsOnTime) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_baton(
      "repro --engine decode --engine prefill --engine embed --duration 2 "
      "--watchdog-deadline 0.3 --inject-hang-rate 1e9 --json",
      30);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(seconds, 2.0 + 0.3 + 5.0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_GT(j.at("faults").at("by_class").at("hang").at("injected").get<int>(), 0);
}

}  // namespace
}  // namespace baton
