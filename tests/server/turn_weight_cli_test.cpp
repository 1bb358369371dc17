// --turn-weight NAME=W on `baton serve`'s command line: a model's share of the GPU. A name
// no model has, a value that is not a number or one out of range is a usage error (exit 2)
// that says which, before anything loads.
#include <gtest/gtest.h>

#include <string>

#include "cli_util.h"

namespace baton {
namespace {

using testing::run_baton;

TEST(TurnWeightCli, AWeightForNoModelOrOutOfRangeIsAUsageError) {
  const std::string serve = "serve --no-ledger --port 0 --model chat=/no/such/model ";
  const std::pair<std::string, std::string> cases[] = {
      {"--turn-weight long=3", "--turn-weight long=3: no model is named \"long\""},
      {"--turn-weight chat=three", "expected NAME=WEIGHT"},
      {"--turn-weight =3", "expected NAME=WEIGHT"},
      {"--turn-weight chat=500", "a turn weight must be a number in 0.01..100, not 500"},
      {"--turn-weight chat=0", "a turn weight must be a number in 0.01..100, not 0"},
  };
  for (const auto& [flags, message] : cases) {
    const auto r = run_baton(serve + flags, 60);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << flags << "\n" << r.output;
  }
}

}  // namespace
}  // namespace baton
