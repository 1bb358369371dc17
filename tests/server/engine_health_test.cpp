#include "baton/server/observe/engine_health.h"

#include <gtest/gtest.h>

#include "baton/gpu/fault_injector.h"
#include "baton/host/make_device.h"

namespace baton {
namespace {

FaultEvent fault(const std::string& engine, FaultKind kind, TimePoint at, bool fatal = false) {
  FaultEvent event;
  event.engine = engine;
  event.kind = kind;
  event.time = at;
  event.fatal = fatal;
  event.detail = "injected";
  return event;
}

BurstRecord burst(const std::string& engine, TimePoint granted, bool ok = true) {
  BurstRecord record;
  record.engine = engine;
  record.granted = granted;
  record.done = granted + std::chrono::milliseconds(1);
  record.ok = ok;
  return record;
}

std::string state(const EngineHealth& health, const std::string& engine, TimePoint now) {
  for (const auto& s : health.states(now)) {
    if (s.engine == engine) return s.state;
  }
  return "missing";
}

TEST(EngineHealth, AHangMakesItsEngineRecoveringUntilABurstSucceedsAfterIt) {
  EngineHealth health(std::chrono::milliseconds(100), std::chrono::seconds(5));
  health.watch("a", nullptr);
  health.watch("b", nullptr);
  const TimePoint t0 = Clock::now();
  EXPECT_EQ(state(health, "a", t0), "ok");
  health.fault(fault("a", FaultKind::hang, t0));
  EXPECT_EQ(state(health, "a", t0), "recovering");
  EXPECT_EQ(state(health, "b", t0), "ok");                           // the other engine answers on
  health.burst_done(burst("a", t0 - std::chrono::milliseconds(5)));  // began before the hang
  EXPECT_EQ(state(health, "a", t0), "recovering");
  health.burst_done(burst("a", t0 + std::chrono::milliseconds(5), false));  // failed
  EXPECT_EQ(state(health, "a", t0), "recovering");
  health.burst_done(burst("a", t0 + std::chrono::milliseconds(10)));
  EXPECT_EQ(state(health, "a", t0), "ok");
  const auto states = health.states(t0);
  EXPECT_EQ(states[0].faults, 1u);
  ASSERT_EQ(states[0].last_faults.size(), 1u);
  EXPECT_EQ(states[0].last_faults[0].kind, FaultKind::hang);
}

TEST(EngineHealth, RecoveringEndsAfterTheSettleTimeWithoutWork) {
  EngineHealth health(std::chrono::milliseconds(100), std::chrono::seconds(5));
  health.watch("a", nullptr);
  const TimePoint t0 = Clock::now();
  health.fault(fault("a", FaultKind::timeout, t0));
  EXPECT_EQ(state(health, "a", t0 + std::chrono::seconds(4)), "recovering");
  EXPECT_EQ(state(health, "a", t0 + std::chrono::seconds(6)), "ok");
}

TEST(EngineHealth, ASlowdownIsCountedButKeepsTheEngineOk) {
  EngineHealth health(std::chrono::milliseconds(100), std::chrono::seconds(5));
  health.watch("a", nullptr);
  const TimePoint t0 = Clock::now();
  health.fault(fault("a", FaultKind::slowdown, t0));
  EXPECT_EQ(state(health, "a", t0), "ok");
  EXPECT_EQ(health.states(t0)[0].faults, 1u);
}

TEST(EngineHealth, AFatalFaultMakesEveryEngineFatal) {
  EngineHealth health(std::chrono::milliseconds(100), std::chrono::seconds(5));
  health.watch("a", nullptr);
  health.watch("b", nullptr);
  const TimePoint t0 = Clock::now();
  health.fault(fault("", FaultKind::submissions_ignored, t0, true));
  health.burst_done(burst("a", t0 + std::chrono::seconds(1)));
  for (const auto& s : health.states(t0 + std::chrono::seconds(60))) {
    EXPECT_EQ(s.state, "fatal") << s.engine;
    EXPECT_NE(s.reason.find("restart"), std::string::npos);
  }
}

TEST(EngineHealth, AStreamWithNoProgressForTheDeadlineIsHung) {
  // A real stream whose buffers hang (injected) until it is reset.
  FaultPlan plan;
  plan.hang_probability = 1.0;
  FaultInjector injector(plan);
  auto device = make_device("cpu", &injector);
  std::unique_ptr<Stream> stream = device->create_stream("a");
  EngineHealth health(std::chrono::milliseconds(50), std::chrono::seconds(5));
  health.watch("a", stream.get());
  EXPECT_EQ(state(health, "a", Clock::now()), "ok");
  stream->encode(Op{.run = [] {}, .bytes = 0});
  stream->commit();
  const TimePoint committed = Clock::now();
  EXPECT_EQ(state(health, "a", committed), "ok");
  EXPECT_EQ(state(health, "a", committed + std::chrono::milliseconds(200)), "hung");
  stream->reset(GpuError(GpuErrorClass::hang, "test", "reset"));
  stream->wait_idle();
  (void)stream->take_error();
  EXPECT_EQ(state(health, "a", Clock::now() + std::chrono::milliseconds(200)), "ok");
}

}  // namespace
}  // namespace baton
