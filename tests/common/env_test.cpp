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

TEST(IntFromEnv, ZeroIsASettingOnlyWhereZeroIsAllowed) {
  constexpr const char* kInt = "BATON_ENV_TEST_INT";
  ::unsetenv(kInt);
  EXPECT_EQ(non_negative_int_from_env(kInt, 7), 7);
  ::setenv(kInt, "0", 1);
  EXPECT_EQ(non_negative_int_from_env(kInt, 7), 0);
  EXPECT_THROW((void)positive_int_from_env(kInt, 7), std::invalid_argument);
  ::setenv(kInt, "-1", 1);
  EXPECT_THROW((void)non_negative_int_from_env(kInt, 7), std::invalid_argument);
  ::setenv(kInt, "12", 1);
  EXPECT_EQ(non_negative_int_from_env(kInt, 7), 12);
  EXPECT_EQ(positive_int_from_env(kInt, 7), 12);
  ::unsetenv(kInt);
}

}  // namespace
}  // namespace baton
