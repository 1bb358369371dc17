#include "baton/server/observe/device_probe.h"

#include <gtest/gtest.h>

#include <thread>

#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::eventually;

TEST(DeviceProbe, ProbesWhileIdleAndNotWhileBusy) {
  EngineHost host(make_device("cpu"), TurnOptions{});
  std::atomic<bool> idle{false};
  DeviceProbe probe(
      host.turn(), host.add_watched_stream("probe"), [&] { return idle.load(); },
      std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(probe.probes(), 0u);
  idle = true;
  EXPECT_TRUE(eventually([&] { return probe.probes() >= 5; }));
}

TEST(DeviceProbe, FindsADeviceThatTurnedFatalWithoutAnyRequest) {
  FaultPlan plan;
  plan.fatal_after_s = 0.05;
  auto injector = std::make_unique<FaultInjector>(plan);
  FaultInjector* hooks = injector.get();
  EngineHost host(make_device("cpu", hooks), TurnOptions{}, WatchdogOptions{}, std::move(injector));
  DeviceProbe probe(
      host.turn(), host.add_watched_stream("probe"), [] { return true; },
      std::chrono::milliseconds(10));
  EXPECT_TRUE(host.faults().wait_fatal_for(std::chrono::seconds(5)));
  EXPECT_EQ(host.faults().fatal()->kind, FaultKind::submissions_ignored);
}

}  // namespace
}  // namespace baton
