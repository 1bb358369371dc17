// End to end: `baton repro` with injected hangs writes a ledger under concurrent and under
// serialize; `baton analyze` on it finds the hangs only in dual time under concurrent,
// and `--compare` reports the difference between the two policies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "temp_ledger_path.h"

namespace baton {
namespace {

using testing::run_baton;

TEST(AnalyzeEndToEnd, FindsTheAssociationAndTheDifferenceBetweenPolicies) {
  testing::TempLedgerPath ledger;
  const std::string common =
      "repro --engine decode --engine decode --duration 4 --seed 5 "
      "--inject-hang-rate 4 --watchdog-deadline 0.25 --json --ledger " +
      ledger.path().string();
  const auto concurrent = run_baton(common + " --policy concurrent");
  ASSERT_EQ(concurrent.exit_code, 0) << concurrent.output;
  const auto serialize = run_baton(common + " --policy serialize --quantum layer");
  ASSERT_EQ(serialize.exit_code, 0) << serialize.output;

  const auto a =
      run_baton("analyze --json --ledger " + ledger.path().string() + " --policy concurrent");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const auto j = nlohmann::json::parse(a.output);
  const std::int64_t n = j["uniform_test"]["n"];
  ASSERT_GE(n, 6) << a.output;  // a rate of 4 per second of overlap for 4 s
  // Injected only in overlap time, and placed at their onset: all in dual time.
  EXPECT_EQ(j["uniform_test"]["in_dual"], n);
  EXPECT_EQ(j["rates"]["single"]["hangs"], 0);
  EXPECT_GT(j["dual_share"].get<double>(), 0.5);
  EXPECT_NEAR(j["uniform_test"]["p"].get<double>(),
              std::pow(j["dual_share"].get<double>(), static_cast<double>(n)), 1e-9);

  const auto c = run_baton("analyze --json --compare --ledger " + ledger.path().string() +
                           " --policy concurrent --policy serialize/layer+decode-first");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto cj = nlohmann::json::parse(c.output);
  EXPECT_EQ(cj["b"]["hangs"]["total"], 0);  // serialize: zero overlap, nothing injected
  EXPECT_TRUE(cj["rate_ratio"].is_null());  // unbounded: B saw no hang
  EXPECT_LT(cj["p_value"].get<double>(), 0.05) << c.output;
  EXPECT_NE(cj["verdict"].get<std::string>().find("more often"), std::string::npos)
      << cj["verdict"];
}

}  // namespace
}  // namespace baton
