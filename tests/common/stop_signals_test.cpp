#include "baton/common/stop_signals.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "baton/common/interrupted.h"
#include "test_util.h"

namespace baton {
namespace {

TEST(StopSignals, ASignalAsksToStopAndTheHandlersComeBackAfterwards) {
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &before), 0);
  {
    StopSignals signals;
    EXPECT_EQ(signals.received(), 0);
    EXPECT_NO_THROW(signals.throw_if_stopped());
    ASSERT_EQ(raise(SIGTERM), 0);  // handled: the test process lives on
    ASSERT_TRUE(testing::eventually([&] { return signals.received() == SIGTERM; }));
    EXPECT_THROW(signals.throw_if_stopped(), Interrupted);
    EXPECT_THROW(StopSignals(), std::logic_error);  // one per process
  }
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

// As under nohup: an ignored SIGHUP stays ignored.
TEST(StopSignals, AnIgnoredSignalStaysIgnored) {
  struct sigaction ignore {}, before {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &before), 0);
  {
    StopSignals signals;
    ASSERT_EQ(raise(SIGHUP), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // three polls of the watcher
    EXPECT_EQ(signals.received(), 0);
  }
  sigaction(SIGHUP, &before, nullptr);
}

}  // namespace
}  // namespace baton
