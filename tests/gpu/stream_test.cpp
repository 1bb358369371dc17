#include "baton/gpu/stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "test_util.h"

namespace baton {
namespace {

using testing::Gate;

Op nop(std::size_t bytes = 0) {
  return Op{.run = [] {}, .bytes = bytes};
}

TEST(Stream, CommitsWhenTheOpsCapIsReached) {
  cpu::CpuDevice device(CommitLimits{.max_ops = 3, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  for (int i = 0; i < 7; ++i) stream->encode(nop());
  EXPECT_EQ(stream->stats().committed, 2u);  // 3 + 3; one op still open
  stream->synchronize();
  const StreamStats s = stream->stats();
  EXPECT_EQ(s.committed, 3u);
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.ops_committed, 7u);
}

TEST(Stream, CommitsWhenTheBytesCapIsReached) {
  cpu::CpuDevice device(CommitLimits{.max_ops = 1000, .max_bytes = 10});
  auto stream = device.create_stream("s");
  stream->encode(nop(4));
  stream->encode(nop(4));
  EXPECT_EQ(stream->stats().committed, 0u);
  stream->encode(nop(4));  // 12 bytes >= 10
  EXPECT_EQ(stream->stats().committed, 1u);
  stream->encode(nop(1));
  stream->commit();  // explicit commit of a partial buffer
  EXPECT_EQ(stream->stats().committed, 2u);
  stream->commit();  // nothing open: no empty buffer
  EXPECT_EQ(stream->stats().committed, 2u);
  stream->synchronize();
}

TEST(CommitLimits, DefaultsAndEnvironmentOverrides) {
  unsetenv("BATON_MAX_OPS_PER_BUFFER");
  unsetenv("BATON_MAX_MB_PER_BUFFER");
  EXPECT_EQ(CommitLimits::from_env().max_ops, 50u);
  EXPECT_EQ(CommitLimits::from_env().max_bytes, std::size_t{50} << 20);
  setenv("BATON_MAX_OPS_PER_BUFFER", "7", 1);
  setenv("BATON_MAX_MB_PER_BUFFER", "3", 1);
  EXPECT_EQ(CommitLimits::from_env().max_ops, 7u);
  EXPECT_EQ(CommitLimits::from_env().max_bytes, std::size_t{3} << 20);
  setenv("BATON_MAX_OPS_PER_BUFFER", "seven", 1);
  EXPECT_THROW(CommitLimits::from_env(), std::invalid_argument);
  setenv("BATON_MAX_OPS_PER_BUFFER", "0", 1);
  EXPECT_THROW(CommitLimits::from_env(), std::invalid_argument);
  unsetenv("BATON_MAX_OPS_PER_BUFFER");
  unsetenv("BATON_MAX_MB_PER_BUFFER");
}

TEST(Stream, CommitReturnsBeforeTheWorkRunsAndStatsShowIt) {
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("s");
  Gate gate;
  stream->encode(gate.op());
  stream->commit();  // must not block on the gated op
  stream->encode(nop());
  stream->commit();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  StreamStats s = stream->stats();
  EXPECT_EQ(s.in_flight, 2u);
  EXPECT_GE(s.oldest_age_s, 0.004);
  EXPECT_TRUE(s.last_commit.has_value());
  EXPECT_FALSE(s.last_completion.has_value());
  gate.open();
  stream->synchronize();
  s = stream->stats();
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_EQ(s.oldest_age_s, 0.0);
  EXPECT_TRUE(s.last_completion.has_value());
}

// Device time counts each buffer once, from when the device could start it to its end:
// two buffers committed back to back and a pause with nothing in flight add up to the
// buffers' work, not to the wall time.
TEST(Stream, DeviceTimeCountsTheBuffersWorkNotTheIdleTime) {
  cpu::CpuDevice device{CommitLimits{}};
  auto stream = device.create_stream("s");
  // Each op records how long it really ran: on a loaded machine a sleep overruns.
  std::vector<double> ran_ms(3, 0.0);
  const auto sleep_op = [&ran_ms](std::size_t i, int ms) {
    return Op{.run = [&ran_ms, i, ms] {
      const TimePoint start = Clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      ran_ms[i] = millis_between(start, Clock::now());
    }};
  };
  EXPECT_EQ(stream->device_ns(), 0);
  stream->encode(sleep_op(0, 20));
  stream->commit();
  stream->encode(sleep_op(1, 20));
  stream->commit();  // queued behind the first: its time starts when the first ends
  stream->synchronize();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // idle: not device time
  stream->encode(sleep_op(2, 10));
  stream->synchronize();
  const double ms = static_cast<double>(stream->device_ns()) / 1e6;
  const double work_ms = ran_ms[0] + ran_ms[1] + ran_ms[2];
  EXPECT_GE(ms, work_ms - 1.0);
  // The buffers' work and the stream's own hand-offs (a loaded machine's wake-ups), not
  // the 200 ms pause.
  EXPECT_LT(ms, work_ms + 100.0) << "the ops ran " << work_ms << " ms";
}

TEST(Stream, WaitInFlightReturnsOnceFewEnoughBuffersAreLeft) {
  cpu::CpuDevice device{CommitLimits{}};
  auto stream = device.create_stream("s");
  Gate first;
  Gate second;
  stream->encode(first.op());
  stream->commit();
  stream->encode(second.op());
  stream->commit();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    stream->wait_in_flight(1);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load());  // two in flight
  first.open();
  waiter.join();  // one left: returns while the second still runs
  EXPECT_EQ(stream->stats().in_flight, 1u);
  second.open();
  stream->synchronize();
}

// A waiter that spins first returns when the buffer completes inside its spin (1 s) and
// when it completes after (1 ms, then asleep on the condition variable).
TEST(Stream, WaitInFlightThatSpinsFirstReturnsEitherWay) {
  for (const auto spin : {std::chrono::milliseconds(1000), std::chrono::milliseconds(1)}) {
    SCOPED_TRACE(spin.count());
    cpu::CpuDevice device{CommitLimits{}};
    auto stream = device.create_stream("s");
    Gate gate;
    stream->encode(gate.op());
    stream->commit();
    std::atomic<bool> returned{false};
    std::thread waiter([&] {
      stream->wait_in_flight(0, spin);
      returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(returned.load());
    gate.open();
    waiter.join();
    EXPECT_EQ(stream->stats().in_flight, 0u);
  }
}

TEST(Stream, ExecutesBuffersInOrderOffTheEncodingThread) {
  cpu::CpuDevice device(CommitLimits{.max_ops = 2, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  std::vector<int> order;  // written only by the executor, read after synchronize
  std::thread::id executor;
  for (int i = 0; i < 20; ++i) {
    stream->encode(Op{.run = [&order, &executor, i] {
      order.push_back(i);
      executor = std::this_thread::get_id();
    }});
  }
  stream->synchronize();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_NE(executor, std::this_thread::get_id());
}

TEST(Stream, FirstErrorIsRaisedAtSynchronizeAndLaterBuffersAreSkipped) {
  cpu::CpuDevice device(CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30});
  auto stream = device.create_stream("s");
  bool later_ran = false;
  stream->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "first"); }});
  stream->encode(Op{.run = [] { throw GpuError(GpuErrorClass::timeout, "test", "second"); }});
  stream->encode(Op{.run = [&later_ran] { later_ran = true; }});
  try {
    stream->synchronize();
    FAIL() << "synchronize did not raise";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
    EXPECT_NE(std::string(e.what()).find("first"), std::string::npos);
  }
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(stream->stats().completed, 3u);  // skipped buffers still complete
  EXPECT_NO_THROW(stream->synchronize());    // the error was consumed
  stream->encode(Op{.run = [&later_ran] { later_ran = true; }});
  stream->synchronize();
  EXPECT_TRUE(later_ran);  // the stream works again
}

TEST(Stream, OtherExceptionsBecomeGpuErrorsOfClassOther) {
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("s");
  stream->encode(Op{.run = [] { throw std::runtime_error("boom"); }});
  try {
    stream->synchronize();
    FAIL();
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::other);
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("[stream s]"), std::string::npos);
  }
}

TEST(Stream, DrainFromAnotherThreadTakesTheError) {
  cpu::CpuDevice device(CommitLimits{});
  Stream& stream = device.default_stream();
  stream.encode(Op{.run = [] { throw GpuError(GpuErrorClass::submissions_ignored, "test", "x"); }});
  stream.commit();
  std::thread other([&stream] {
    try {
      stream.drain();
      ADD_FAILURE() << "drain did not raise";
    } catch (const GpuError& e) {
      EXPECT_TRUE(e.fatal());
    }
  });
  other.join();
  EXPECT_NO_THROW(stream.synchronize());
}

TEST(Stream, TwoStreamsRunAtOnceAndTheMeterSeesIt) {
  cpu::CpuDevice device(CommitLimits{});
  auto a = device.create_stream("a");
  auto b = device.create_stream("b");
  Gate gate;
  a->encode(gate.op());
  a->commit();
  b->encode(gate.op());
  b->commit();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  gate.open();
  a->synchronize();
  b->synchronize();
  const OverlapReading r = device.overlap().read();
  EXPECT_GE(r.overlap_s, 0.004);
  EXPECT_EQ(r.max_busy, 2u);
  EXPECT_EQ(r.busy_now, 0u);
}

TEST(Stream, ResetIfOldestLeavesALaterBufferAlone) {
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("s");
  stream->encode(Op{.run = [] {}});
  stream->synchronize();  // buffer 1 has completed
  testing::Gate gate;
  stream->encode(gate.op());
  stream->commit();  // buffer 2 in flight
  bool recorded = false;
  EXPECT_FALSE(stream->reset_if_oldest(1, GpuError(GpuErrorClass::hang, "test", "late"),
                                       [&] { recorded = true; }));
  EXPECT_FALSE(recorded);
  EXPECT_TRUE(stream->reset_if_oldest(2, GpuError(GpuErrorClass::hang, "test", "stuck"),
                                      [&] { recorded = true; }));
  EXPECT_TRUE(recorded);
  gate.open();
  EXPECT_THROW(stream->synchronize(), GpuError);
}

TEST(Stream, DestructorFinishesCommittedWork) {
  cpu::CpuDevice device(CommitLimits{});
  int ran = 0;
  {
    auto stream = device.create_stream("s");
    for (int i = 0; i < 5; ++i) {
      stream->encode(Op{.run = [&ran] { ++ran; }});
      stream->commit();
    }
  }
  EXPECT_EQ(ran, 5);
  EXPECT_EQ(device.overlap().read().busy_now, 0u);
}

}  // namespace
}  // namespace baton
