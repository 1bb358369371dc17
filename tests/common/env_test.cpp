#include "baton/common/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace baton {
namespace {

constexpr const char* kName = "BATON_ENV_TEST_SWITCH";

TEST(SwitchFromEnv, UnsetAndOneAreOnZeroIsOff) {
  ::unsetenv(kName);
  EXPECT_TRUE(switch_from_env(kName));
  ::setenv(kName, "1", 1);
  EXPECT_TRUE(switch_from_env(kName));
  ::setenv(kName, "0", 1);
  EXPECT_FALSE(switch_from_env(kName));
  ::unsetenv(kName);
}

TEST(SwitchFromEnv, ASwitchOffByDefaultIsOnlyOnWhenOne) {
  ::unsetenv(kName);
  EXPECT_FALSE(switch_from_env(kName, false));
  ::setenv(kName, "1", 1);
  EXPECT_TRUE(switch_from_env(kName, false));
  ::setenv(kName, "0", 1);
  EXPECT_FALSE(switch_from_env(kName, false));
  ::unsetenv(kName);
}

TEST(SwitchFromEnv, AnyOtherValueIsRefusedWithTheVariablesName) {
  for (const char* value : {"yes", "", "2", "off"}) {
    ::setenv(kName, value, 1);
    try {
      (void)switch_from_env(kName);
      ADD_FAILURE() << "'" << value << "' was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(kName), std::string::npos) << e.what();
    }
  }
  ::unsetenv(kName);
}

}  // namespace
}  // namespace baton
