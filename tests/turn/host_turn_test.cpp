#include "baton/turn/host_turn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/common/unique_fd.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/engine_host.h"
#include "baton/turn/host_overlap.h"
#include "baton/turn/make_turn.h"
#include "test_util.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

// A segment name of this test alone ("test-<pid>-<ns>"), removed before and after.
struct SegmentName {
  SegmentName() : value("test-" + std::to_string(::getpid()) + "-" + std::to_string(now_ns())) {
    HostSegment::remove(value);
  }
  ~SegmentName() { HostSegment::remove(value); }
  const std::string value;
};

// First come, first served, a whole burst per hold: each test turns on what it tests.
TurnOptions host_options(const std::string& name) {
  TurnOptions options;
  options.policy = TurnPolicy::serialize;
  options.quantum = Quantum::burst;
  options.decode_first = false;
  options.scope = TurnScope::host;
  options.host_name = name;
  return options;
}

// One attachment: the segment, a host-wide meter on a CPU device, a host turn with `n`
// clients, each with its own stream. Several in one process act as several processes.
struct HostFixture {
  HostFixture(const std::string& name, std::size_t n, TurnOptions options)
      : segment(std::make_shared<HostSegment>(name)),
        meter(segment),
        turn(device.default_stream(), options, segment) {
    device.add_observer(meter);  // before any stream commits
    for (std::size_t i = 0; i < n; ++i) {
      streams.push_back(device.create_stream("s" + std::to_string(i)));
      ids.push_back(turn.register_client("c" + std::to_string(i), *streams.back()));
    }
  }
  HostFixture(const std::string& name, std::size_t n) : HostFixture(name, n, host_options(name)) {}
  // Blocks until `count` clients (of any process) wait in line.
  void await_waiters(std::size_t count) {
    ASSERT_TRUE(eventually([&] { return turn.waiting() == count; }));
  }

  std::shared_ptr<HostSegment> segment;
  HostOverlapMeter meter;  // before the device: its streams report to it
  cpu::CpuDevice device{CommitLimits{}};
  HostTurn turn;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<TurnClientId> ids;
};

// Device work that keeps the CPU busy for `us` microseconds.
Op busy_op(std::int64_t us) {
  return Op{.run = [us] {
    const std::int64_t until = now_ns() + us * 1000;
    while (now_ns() < until) {
    }
  }};
}

// A forked child that runs `body` and _exit()s with its result, never returning into
// gtest. Killed and reaped on destruction if still there.
class Child {
 public:
  explicit Child(const std::function<int()>& body) : pid_(::fork()) {
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      int code = 2;
      try {
        code = body();
      } catch (...) {
        code = 3;
      }
      ::_exit(code);
    }
  }
  ~Child() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void kill() const { ::kill(pid_, SIGKILL); }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return status;
  }

 private:
  pid_t pid_;
  bool waited_ = false;
};

bool read_byte(const UniqueFd& fd, std::chrono::milliseconds timeout = 10s) {
  pollfd p{fd.get(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  char c = 0;
  return ::read(fd.get(), &c, 1) == 1;
}

void write_byte(const UniqueFd& fd) {
  const char c = 1;
  (void)!::write(fd.get(), &c, 1);
}

// Counters both processes of a test see: an anonymous shared mapping, made before fork.
struct SharedCounters {
  SharedCounters()
      : at(::mmap(nullptr, sizeof(Counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0)) {
    if (at == MAP_FAILED) throw std::runtime_error("mmap failed");
  }
  ~SharedCounters() { ::munmap(at, sizeof(Counts)); }
  struct Counts {
    std::atomic<int> rounds[2];
  };
  Counts& counts() const { return *static_cast<Counts*>(at); }
  void* const at;
};

TEST(HostTurn, GrantsTheTurnInArrivalOrder) {
  SegmentName name;
  constexpr std::size_t kWaiters = 6;
  HostFixture f(name.value, kWaiters + 1);
  f.turn.acquire(f.ids[kWaiters], BurstKind::decode);
  std::vector<std::size_t> order;  // only touched while holding the turn
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    threads.emplace_back([&f, &order, i] {
      f.turn.acquire(f.ids[i], i % 2 ? BurstKind::prefill : BurstKind::decode);
      order.push_back(i);
      f.turn.release(f.ids[i]);
    });
    f.await_waiters(i + 1);
  }
  f.turn.release(f.ids[kWaiters]);
  for (auto& t : threads) t.join();
  ASSERT_EQ(order.size(), kWaiters);
  for (std::size_t i = 0; i < kWaiters; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(f.turn.stats().handovers, kWaiters);
}

TEST(HostTurn, DecodeFirstLetsWaitingDecodeBurstsGoAhead) {
  SegmentName name;
  TurnOptions options = host_options(name.value);
  options.decode_first = true;
  HostFixture f(name.value, 5, options);
  const BurstKind kinds[] = {BurstKind::prefill, BurstKind::decode, BurstKind::embed,
                             BurstKind::decode};
  f.turn.acquire(f.ids[4], BurstKind::prefill);
  std::vector<std::size_t> order;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 4; ++i) {
    threads.emplace_back([&f, &order, &kinds, i] {
      f.turn.acquire(f.ids[i], kinds[i]);
      order.push_back(i);
      f.turn.release(f.ids[i]);
    });
    f.await_waiters(i + 1);
  }
  f.turn.release(f.ids[4]);
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 3, 0, 2}));
}

TEST(HostTurn, IsReentrantOnTheHoldingThread) {
  SegmentName name;
  HostFixture f(name.value, 2);
  std::atomic<bool> other_holds{false};
  f.turn.acquire(f.ids[0], BurstKind::decode);
  f.turn.acquire(f.ids[0], BurstKind::decode);  // must not deadlock
  std::thread other([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    other_holds = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.turn.release(f.ids[0]);  // depth 2 -> 1: still held
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(other_holds.load());
  f.turn.release(f.ids[0]);
  other.join();
  EXPECT_TRUE(other_holds.load());
  EXPECT_EQ(f.turn.stats().clients[0].acquisitions, 1u);
}

TEST(HostTurn, DrainErrorReachesTheHolderAndTheTurnStillMovesOn) {
  SegmentName name;
  HostFixture f(name.value, 2);
  std::atomic<bool> waiter_ran{false};
  f.turn.acquire(f.ids[0], BurstKind::decode);
  std::thread waiter([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    waiter_ran = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.streams[0]->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "stuck"); }});
  try {
    f.turn.release(f.ids[0]);
    ADD_FAILURE() << "release did not raise the drain error";
  } catch (const GpuError& e) {
    EXPECT_EQ(e.error_class(), GpuErrorClass::hang);
  }
  waiter.join();
  EXPECT_TRUE(waiter_ran.load());
}

TEST(HostTurn, DefaultStreamErrorsReachTheHolderAndQuietReleaseKeepsThem) {
  SegmentName name;
  HostFixture f(name.value, 1);
  f.device.default_stream().encode(
      Op{.run = [] { throw GpuError(GpuErrorClass::timeout, "test", "default"); }});
  f.device.default_stream().commit();
  f.turn.acquire(f.ids[0], BurstKind::decode);
  EXPECT_THROW(f.turn.release(f.ids[0]), GpuError);
  f.turn.acquire(f.ids[0], BurstKind::decode);  // the turn was freed
  f.streams[0]->encode(Op{.run = [] { throw GpuError(GpuErrorClass::hang, "test", "kept"); }});
  f.turn.release_quietly(f.ids[0]);
  EXPECT_THROW(f.streams[0]->synchronize(), GpuError);  // not swallowed
}

TEST(HostTurn, HolderDrainsBeforeTheNextHolderRuns) {
  SegmentName name;
  HostFixture f(name.value, 2);
  std::atomic<bool> slow_op_done{false};
  std::atomic<bool> saw_unfinished{false};
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  std::thread next([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    if (!slow_op_done) saw_unfinished = true;
    f.streams[1]->encode(busy_op(100));
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.streams[0]->encode(Op{.run = [&] {
    std::this_thread::sleep_for(20ms);
    slow_op_done = true;
  }});
  f.turn.release(f.ids[0]);
  next.join();
  EXPECT_FALSE(saw_unfinished.load());
  const OverlapReading r = f.meter.read();
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.max_busy, 1u);
  EXPECT_EQ(r.busy_now, 0u);
}

TEST(HostTurn, LayerQuantumHandsOverAtAYieldPointAndQueuesAgain) {
  SegmentName name;
  TurnOptions options = host_options(name.value);
  options.quantum = Quantum::layer;
  HostFixture f(name.value, 2, options);
  std::vector<std::string> events;  // only touched while holding the turn
  f.turn.acquire(f.ids[0], BurstKind::prefill);
  // Nobody waits: keeps the turn, and waited for nothing.
  EXPECT_EQ(f.turn.yield_point(f.ids[0], Boundary::layer), std::chrono::nanoseconds(0));
  events.push_back("prefill layer 1");
  constexpr auto kDecodeHolds = std::chrono::milliseconds(30);
  std::thread decode([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    events.push_back("decode step");
    std::this_thread::sleep_for(kDecodeHolds);
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.turn.yield_point(f.ids[0], Boundary::op);  // no quantum under `layer`
  // Hands over, waits, gets it back: the wait is the decoder's hold.
  const auto waited = f.turn.yield_point(f.ids[0], Boundary::layer);
  events.push_back("prefill layer 2");
  f.turn.release(f.ids[0]);
  decode.join();
  EXPECT_EQ(events,
            (std::vector<std::string>{"prefill layer 1", "decode step", "prefill layer 2"}));
  EXPECT_EQ(f.turn.stats().clients[0].yields, 1u);
  EXPECT_GE(waited, kDecodeHolds);
}

TEST(HostTurn, MutualExclusionUnderContention) {
  SegmentName name;
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  HostFixture f(name.value, kThreads);
  int inside = 0;  // a plain int: TSan flags any overlap of holders
  int total = 0;
  std::atomic<int> violations{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        f.turn.acquire(f.ids[static_cast<std::size_t>(t)], BurstKind::decode);
        if (inside++ != 0) ++violations;
        ++total;
        --inside;
        f.turn.release(f.ids[static_cast<std::size_t>(t)]);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(total, kThreads * kRounds);
  std::uint64_t acquisitions = 0;
  for (const auto& c : f.turn.stats().clients) acquisitions += c.acquisitions;
  EXPECT_EQ(acquisitions, static_cast<std::uint64_t>(kThreads * kRounds));
}

// Two attachments in one process share the segment as two processes would. They map it
// at two addresses, which TSan takes for two objects, so it cannot see the hand-over's
// synchronization here: `inside` is an atomic, and still counts any overlap of holders.
TEST(HostTurn, TwoAttachmentsTakeTurnsWithZeroHostOverlap) {
  SegmentName name;
  HostFixture a(name.value, 1);
  HostFixture b(name.value, 1);
  EXPECT_EQ(a.segment->processes(), 2u);
  constexpr int kRounds = 300;
  std::atomic<int> inside{0};
  std::atomic<int> violations{0};
  auto loop = [&](HostFixture& f) {
    for (int r = 0; r < kRounds; ++r) {
      f.turn.acquire(f.ids[0], BurstKind::decode);
      if (inside.fetch_add(1) != 0) ++violations;
      f.streams[0]->encode(busy_op(5));
      inside.fetch_sub(1);
      f.turn.release(f.ids[0]);
    }
  };
  std::thread ta(loop, std::ref(a));
  std::thread tb(loop, std::ref(b));
  ta.join();
  tb.join();
  EXPECT_EQ(violations.load(), 0);
  const OverlapReading r = b.meter.read();
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.episodes, 0u);
  EXPECT_EQ(r.max_busy, 1u);
}

TEST(HostTurn, MeterCountsOverlapAcrossAttachments) {
  SegmentName name;
  HostFixture a(name.value, 1);
  HostFixture b(name.value, 1);
  testing::Gate gate;
  a.streams[0]->encode(gate.op());
  a.streams[0]->commit();
  b.streams[0]->encode(gate.op());
  b.streams[0]->commit();  // two streams of two "processes" busy at once: no turn taken
  ASSERT_TRUE(eventually([&] { return a.meter.read().busy_now == 2; }));
  std::this_thread::sleep_for(2ms);
  const OverlapReading open = a.meter.read();
  EXPECT_GT(open.overlap_s, 0.0);
  EXPECT_EQ(open.episodes, 1u);
  EXPECT_EQ(a.meter.busy_here(), 1u);
  gate.open();
  a.streams[0]->wait_idle();
  b.streams[0]->wait_idle();
  const OverlapReading closed = b.meter.read();
  EXPECT_EQ(closed.busy_now, 0u);
  EXPECT_EQ(closed.max_busy, 2u);
  EXPECT_GE(closed.overlap_s, open.overlap_s);
  HostFixture later(name.value, 0);  // counts from its own start, as a device's meter does
  EXPECT_EQ(later.meter.read().overlap_s, 0.0);
  EXPECT_EQ(later.meter.read().episodes, 0u);
  EXPECT_EQ(later.meter.read().max_busy, 0u);
}

TEST(HostTurn, EngineHostsOfOneNameShareTheTurnAndTheOverlap) {
  SegmentName name;
  TurnOptions options = host_options(name.value);
  options.policy = TurnPolicy::concurrent;  // no arbitration: their streams overlap
  EngineHost one(std::make_unique<cpu::CpuDevice>(CommitLimits{}), options);
  EngineHost two(std::make_unique<cpu::CpuDevice>(CommitLimits{}), options);
  Stream& a = one.add_watched_stream("a");
  Stream& b = two.add_watched_stream("b");
  testing::Gate gate;
  a.encode(gate.op());
  a.commit();
  b.encode(gate.op());
  b.commit();
  ASSERT_TRUE(eventually([&] { return one.overlap().busy_now == 2; }));
  std::this_thread::sleep_for(2ms);
  EXPECT_GT(one.overlap().overlap_s, 0.0);
  EXPECT_GT(two.overlap().overlap_s, 0.0);
  EXPECT_EQ(one.device().overlap().read().overlap_s, 0.0);  // each device alone saw none
  gate.open();
  a.wait_idle();
  b.wait_idle();
  options.policy = TurnPolicy::serialize;
  EngineHost three(std::make_unique<cpu::CpuDevice>(CommitLimits{}), options);
  EXPECT_NE(dynamic_cast<HostTurn*>(&three.turn()), nullptr);
  EXPECT_EQ(three.overlap().overlap_s, 0.0);  // counts from its own start
}

TEST(HostTurn, ScopeOptionsAndMakeTurn) {
  EXPECT_EQ(parse_turn_scope("host"), TurnScope::host);
  EXPECT_EQ(parse_turn_scope("process"), TurnScope::process);
  EXPECT_EQ(parse_turn_scope("machine"), std::nullopt);
  EXPECT_EQ(to_string(TurnScope::host), "host");
  SegmentName name;
  TurnOptions options = host_options(name.value);
  options.quantum = Quantum::layer;
  EXPECT_EQ(describe(options), "serialize/layer@host");
  cpu::CpuDevice device{CommitLimits{}};
  auto host = make_turn(options, device.default_stream());
  EXPECT_NE(dynamic_cast<HostTurn*>(host.get()), nullptr);
  options.policy = TurnPolicy::concurrent;
  EXPECT_EQ(describe(options), "concurrent@host");
  EXPECT_EQ(make_turn(options, device.default_stream())->policy_name(), "concurrent");
  options.policy = TurnPolicy::partition;
  try {
    (void)make_turn(options, device.default_stream());
    ADD_FAILURE() << "partition at host scope was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("partition"), std::string::npos) << e.what();
  }
}

TEST(HostTurnSegment, RejectsASegmentOfAnotherSizeOrVersion) {
  SegmentName name;
  const std::string shm = "/baton-turn-" + name.value;
  auto expect_error = [&](const char* needle, std::chrono::milliseconds timeout = 2s) {
    try {
      HostSegment segment(name.value, timeout);
      ADD_FAILURE() << "attached to a bad segment";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(HostSegment::file_of(name.value)), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  {
    const UniqueFd fd(::shm_open(shm.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    ASSERT_GE(fd.get(), 0);
    ASSERT_EQ(::ftruncate(fd.get(), 100), 0);
    expect_error("100 bytes");
    ASSERT_EQ(::ftruncate(fd.get(), sizeof(HostSharedState)), 0);
    expect_error("never finished", 50ms);  // the right size, but nothing published
    void* at =
        ::mmap(nullptr, sizeof(HostSharedState), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    ASSERT_NE(at, MAP_FAILED);
    static_cast<HostSharedState*>(at)->header.store((std::uint64_t{0x4254524e} << 32) | 999);
    expect_error("layout version 999");
    static_cast<HostSharedState*>(at)->header.store(0x1234);
    expect_error("not a baton turn segment");
    ::munmap(at, sizeof(HostSharedState));
  }
  EXPECT_THROW(HostSegment("a/b"), std::runtime_error);
  EXPECT_THROW(HostSegment(""), std::runtime_error);
}

TEST(HostTurnProcesses, TwoProcessesTakeTurnsWithZeroHostOverlap) {
  SegmentName name;
  constexpr int kRounds = 300;
  SharedCounters shared;
  SharedCounters::Counts& counts = shared.counts();
  Pipe ready = make_pipe(false);
  Pipe go = make_pipe(false);
  // Each side takes turns until both have done kRounds, so that they overlap in time.
  auto take_turns = [&counts, kRounds](HostFixture& f, int me) {
    const auto deadline = Clock::now() + 30s;
    while (counts.rounds[0].load() < kRounds || counts.rounds[1].load() < kRounds) {
      if (Clock::now() > deadline) return false;
      f.turn.acquire(f.ids[0], BurstKind::decode);
      f.streams[0]->encode(busy_op(20));
      f.turn.release(f.ids[0]);
      counts.rounds[me].fetch_add(1);
    }
    return true;
  };
  Child child([&]() -> int {
    HostFixture f(name.value, 1);
    write_byte(ready.write);
    if (!read_byte(go.read)) return 4;
    return take_turns(f, 1) ? 0 : 5;
  });
  HostFixture f(name.value, 1);
  ASSERT_TRUE(read_byte(ready.read));
  write_byte(go.write);
  EXPECT_TRUE(take_turns(f, 0));
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_GE(counts.rounds[0].load(), kRounds);
  EXPECT_GE(counts.rounds[1].load(), kRounds);
  EXPECT_GT(f.turn.stats().clients[0].handovers_in, 0u);  // it waited for the child
  const OverlapReading r = f.meter.read();
  EXPECT_EQ(r.overlap_s, 0.0);
  EXPECT_EQ(r.episodes, 0u);
  EXPECT_EQ(r.max_busy, 1u);
  EXPECT_EQ(f.segment->processes(), 1u);  // the child left the table on its way out
}

TEST(HostTurnProcesses, SurvivorTakesTheTurnFromAKilledHolder) {
  SegmentName name;
  Pipe holds = make_pipe(false);
  Child child([&]() -> int {
    HostFixture f(name.value, 1);
    f.turn.acquire(f.ids[0], BurstKind::prefill);
    testing::Gate never;
    f.streams[0]->encode(never.op());
    f.streams[0]->commit();  // a busy stream the host meter counts
    write_byte(holds.write);
    for (;;) ::pause();
  });
  ASSERT_TRUE(read_byte(holds.read));
  HostFixture f(name.value, 1);
  EXPECT_EQ(f.meter.read().busy_now, 1u);
  std::atomic<std::int64_t> acquired_at{0};
  std::thread waiter([&] {
    f.turn.acquire(f.ids[0], BurstKind::decode);
    acquired_at = now_ns();
    f.turn.release(f.ids[0]);
  });
  f.await_waiters(1);
  const std::int64_t killed_at = now_ns();
  child.kill();  // not reaped until the survivor holds: a zombie must count as dead
  waiter.join();
  const auto bound = std::chrono::nanoseconds(TurnOptions{}.liveness_poll) + 500ms;
  const std::int64_t took = acquired_at.load() - killed_at;
  EXPECT_LT(took, bound.count()) << took / 1000 << " us";
  RecordProperty("takeover_us", static_cast<int>(took / 1000));
  const OverlapReading r = f.meter.read();
  EXPECT_EQ(r.busy_now, 0u);  // the dead child's busy stream no longer counts
  EXPECT_EQ(f.segment->processes(), 1u);
  EXPECT_EQ(f.segment->reaped(), 1u);
  const int status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(HostTurnProcesses, ADeadWaiterIsTakenOutOfTheLine) {
  SegmentName name;
  Pipe go = make_pipe(false);
  Child child([&]() -> int {
    HostFixture f(name.value, 1);
    if (!read_byte(go.read)) return 4;
    f.turn.acquire(f.ids[0], BurstKind::decode);
    for (;;) ::pause();
  });
  HostFixture f(name.value, 2);
  f.turn.acquire(f.ids[0], BurstKind::decode);
  write_byte(go.write);
  f.await_waiters(1);
  child.kill();
  ASSERT_TRUE(eventually([&] { return f.segment->reap_dead() == 1; }));  // dead once a zombie
  EXPECT_EQ(f.turn.waiting(), 0u);
  f.turn.release(f.ids[0]);  // nobody to hand to: the turn is free
  f.turn.acquire(f.ids[1], BurstKind::decode);
  f.turn.release(f.ids[1]);
  EXPECT_EQ(f.turn.stats().clients[1].handovers_in, 0u);  // taken at once
  child.wait();
}

TEST(HostTurnProcesses, ADeadWaiterThatReachesTheFrontIsPassedOver) {
  SegmentName name;
  Pipe go = make_pipe(false);
  Child child([&]() -> int {
    HostFixture f(name.value, 1);
    if (!read_byte(go.read)) return 4;
    f.turn.acquire(f.ids[0], BurstKind::decode);
    for (;;) ::pause();
  });
  HostFixture f(name.value, 2);
  f.turn.acquire(f.ids[0], BurstKind::decode);
  write_byte(go.write);
  f.await_waiters(1);  // the child, first in line
  std::atomic<bool> second_ran{false};
  std::thread second([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    second_ran = true;
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(2);
  child.kill();
  f.turn.release(f.ids[0]);  // hands the turn to the dead child, if not reaped yet
  second.join();
  EXPECT_TRUE(second_ran.load());
  EXPECT_EQ(f.segment->processes(), 1u);
  child.wait();
}

TEST(HostTurnProcesses, ADeathInsideTheSegmentMutexLeavesItUsable) {
  SegmentName name;
  auto segment = std::make_shared<HostSegment>(name.value);  // before fork: no threads yet
  Pipe locked = make_pipe(false);
  Child child([&]() -> int {
    HostSegment mine(name.value);
    HostSegment::Lock lock = mine.lock();
    write_byte(locked.write);
    for (;;) ::pause();
  });
  ASSERT_TRUE(read_byte(locked.read));
  child.kill();
  // The next lock sees EOWNERDEAD and makes the mutex consistent; it reaps the child too
  // unless the child is still on its way out then (its robust list is released before it
  // turns zombie), in which case the next scan does.
  ASSERT_TRUE(eventually([&] {
    segment->reap_dead();
    return segment->processes() == 1;
  }));
  EXPECT_EQ(segment->reaped(), 1u);
  HostFixture f(name.value, 2);
  f.turn.acquire(f.ids[0], BurstKind::decode);
  std::thread other([&] {
    f.turn.acquire(f.ids[1], BurstKind::decode);
    f.turn.release(f.ids[1]);
  });
  f.await_waiters(1);
  f.turn.release(f.ids[0]);
  other.join();
  EXPECT_EQ(f.turn.stats().handovers, 1u);
  child.wait();
}

}  // namespace
}  // namespace baton
