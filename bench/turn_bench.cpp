// turn_bench: what the GPU turn costs.
//  1. Uncontended acquire+release per policy (Google Benchmark).
//  2. Hand-over latency between two threads that take turns (printed as a table):
//     serialize with spinning waiters, serialize with waiters that park at once, the
//     host-wide turn (--turn-scope host) between two threads and between two processes,
//     and a plain mutex + condition variable hand-over for comparison.
//  3. The device's idle gap at a hand-over when the holder's work is still running as it
//     releases: waiters and holders that sleep against ones that spin (handover_spin).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/common/percentiles.h"
#include "baton/common/unique_fd.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/host_segment.h"
#include "baton/turn/host_turn.h"
#include "baton/turn/make_turn.h"
#include "baton/turn/serial_steps.h"
#include "baton/turn/serial_turn.h"

namespace baton {
namespace {

TurnOptions options_for(TurnPolicy policy, std::chrono::microseconds spin) {
  TurnOptions options;
  options.policy = policy;
  options.spin = spin;
  return options;
}

// A host-scope serialize turn on a segment of its own ("bench-<pid>-<ns>").
TurnOptions host_options_for(std::chrono::microseconds spin, const std::string& name) {
  TurnOptions options = options_for(TurnPolicy::serialize, spin);
  options.scope = TurnScope::host;
  options.host_name = name;
  return options;
}

std::string bench_segment_name() {
  return "bench-" + std::to_string(::getpid()) + "-" + std::to_string(now_ns());
}

void BM_AcquireRelease(benchmark::State& state) {
  const auto policy = static_cast<TurnPolicy>(state.range(0));
  cpu::CpuDevice device(CommitLimits{});
  auto stream = device.create_stream("bench");
  auto turn =
      make_turn(options_for(policy, std::chrono::microseconds(50)), device.default_stream());
  const TurnClientId id = turn->register_client("bench", *stream);
  for (auto _ : state) {
    turn->acquire(id, BurstKind::decode);
    turn->release(id);
  }
  state.SetLabel(std::string(turn->policy_name()));
}
BENCHMARK(BM_AcquireRelease)
    ->Arg(static_cast<int>(TurnPolicy::concurrent))
    ->Arg(static_cast<int>(TurnPolicy::serialize));

void BM_HostAcquireRelease(benchmark::State& state) {
  const std::string name = bench_segment_name();
  {
    cpu::CpuDevice device(CommitLimits{});
    auto stream = device.create_stream("bench");
    auto turn =
        make_turn(host_options_for(std::chrono::microseconds(50), name), device.default_stream());
    const TurnClientId id = turn->register_client("bench", *stream);
    for (auto _ : state) {
      turn->acquire(id, BurstKind::decode);
      turn->release(id);
    }
    state.SetLabel("serialize@host");
  }
  HostSegment::remove(name);
}
BENCHMARK(BM_HostAcquireRelease);

// A 2 us busy hold, like a tiny burst.
void hold_briefly() {
  const std::int64_t until = now_ns() + 2000;
  while (now_ns() < until) {
  }
}

// Clients waiting in line on `turn` (a serialize turn, in-process or host-wide).
std::size_t waiting_on(const GpuTurn& turn) {
  if (const auto* serial = dynamic_cast<const SerialTurn*>(&turn)) return serial->waiting();
  if (const auto* host = dynamic_cast<const HostTurn*>(&turn)) return host->waiting();
  return 0;
}

// One side of the alternation: `rounds` holds of 2 us, each extended (up to 1 ms) until the
// other side waits in line, so that every release is a hand-over. Without that, two sides
// whose release-to-acquire gap matches the other's hold can fall into taking the free
// turn by turns, and the table would measure nothing.
void take_turns(GpuTurn& turn, TurnClientId id, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    turn.acquire(id, BurstKind::decode);
    hold_briefly();
    const std::int64_t give_up = now_ns() + 1'000'000;
    while (waiting_on(turn) == 0 && now_ns() < give_up) cpu_relax();
    turn.release(id);
  }
}

// Two threads alternate holding a serialize turn; returns hand-over latency in us.
LatencySummary serialize_handover(const TurnOptions& options, int rounds) {
  cpu::CpuDevice device(CommitLimits{});
  auto a = device.create_stream("a");
  auto b = device.create_stream("b");
  auto turn = make_turn(options, device.default_stream());
  const TurnClientId ids[] = {turn->register_client("a", *a), turn->register_client("b", *b)};
  std::latch start(2);
  auto loop = [&turn, &start, rounds](TurnClientId id) {
    start.arrive_and_wait();
    take_turns(*turn, id, rounds);
  };
  std::thread ta(loop, ids[0]);
  std::thread tb(loop, ids[1]);
  ta.join();
  tb.join();
  return turn->stats().handover_us;
}

// Two processes (a forked child) alternate holding a host turn; returns the parent's
// hand-overs, from the child's grant to the parent running.
LatencySummary host_process_handover(std::chrono::microseconds spin, int rounds) {
  const std::string name = bench_segment_name();
  Pipe ready = make_pipe(false);
  Pipe go = make_pipe(false);
  char byte = 1;
  const pid_t child = ::fork();
  if (child == 0) {
    int code = 0;
    try {
      cpu::CpuDevice device(CommitLimits{});
      auto stream = device.create_stream("child");
      auto turn = make_turn(host_options_for(spin, name), device.default_stream());
      const TurnClientId id = turn->register_client("child", *stream);
      if (::write(ready.write.get(), &byte, 1) != 1 || ::read(go.read.get(), &byte, 1) != 1) {
        ::_exit(1);
      }
      take_turns(*turn, id, rounds);
    } catch (...) {
      code = 1;
    }
    ::_exit(code);
  }
  LatencySummary parent;
  {
    cpu::CpuDevice device(CommitLimits{});
    auto stream = device.create_stream("parent");
    auto turn = make_turn(host_options_for(spin, name), device.default_stream());
    const TurnClientId id = turn->register_client("parent", *stream);
    if (::read(ready.read.get(), &byte, 1) == 1 && ::write(go.write.get(), &byte, 1) == 1) {
      take_turns(*turn, id, rounds);
    }
    parent = turn->stats().handover_us;
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  HostSegment::remove(name);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::fprintf(stderr, "child failed\n");
  return parent;
}

// The same alternation with a mutex and a condition variable (the lab's 37-89 us).
LatencySummary condition_variable_handover(int rounds) {
  std::mutex mu;
  std::condition_variable cv;
  int owner = 0;
  std::int64_t handed_at = 0;
  std::vector<double> samples;
  std::latch start(2);
  auto loop = [&](int me) {
    start.arrive_and_wait();
    for (int r = 0; r < rounds; ++r) {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return owner == me; });
      if (handed_at != 0) samples.push_back(static_cast<double>(now_ns() - handed_at) / 1000.0);
      owner = 1 - me;
      handed_at = now_ns();
      cv.notify_all();
    }
  };
  std::thread ta(loop, 0);
  std::thread tb(loop, 1);
  ta.join();
  tb.join();
  return summarize(samples);
}

// Two threads take turns, each holding for one op of `work` on its stream (a sleep: the
// device's work, which leaves the core free); returns the device's idle gap at each
// hand-over in us, from the holder's op ending to the next holder running.
LatencySummary device_gap_at_handover(std::chrono::microseconds handover_spin, int rounds) {
  TurnOptions options = options_for(TurnPolicy::serialize, std::chrono::microseconds(50));
  options.handover_spin = handover_spin;
  cpu::CpuDevice device(CommitLimits{});
  auto a = device.create_stream("a");
  auto b = device.create_stream("b");
  auto turn = make_turn(options, device.default_stream());
  const TurnClientId ids[] = {turn->register_client("a", *a), turn->register_client("b", *b)};
  Stream* streams[] = {a.get(), b.get()};
  std::atomic<std::int64_t> work_ended_ns{0};
  std::vector<double> gaps[2];
  std::latch start(2);
  auto loop = [&](int me) {
    start.arrive_and_wait();
    for (int r = 0; r < rounds; ++r) {
      turn->acquire(ids[me], BurstKind::decode);
      const std::int64_t ended = work_ended_ns.exchange(0);
      if (ended != 0) gaps[me].push_back(static_cast<double>(now_ns() - ended) / 1000.0);
      streams[me]->encode(Op{.run = [&work_ended_ns] {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        work_ended_ns = now_ns();
      }});
      const std::int64_t give_up = now_ns() + 1'000'000;
      while (waiting_on(*turn) == 0 && now_ns() < give_up) cpu_relax();
      turn->release(ids[me]);
    }
  };
  std::thread ta(loop, 0);
  std::thread tb(loop, 1);
  ta.join();
  tb.join();
  gaps[0].insert(gaps[0].end(), gaps[1].begin(), gaps[1].end());
  return summarize(gaps[0]);
}

void print_device_gap_table() {
  constexpr int kRounds = 2000;
  std::printf(
      "\nThe device's idle gap at a hand-over: two threads take turns, each holding for\n"
      "one 300-us op on its stream (%d rounds each; the waiter has parked by then)\n",
      kRounds);
  std::printf("%-44s %10s %10s %10s\n", "mechanism", "p50 us", "p99 us", "samples");
  for (const int spin : {0, 1000}) {
    const LatencySummary s = device_gap_at_handover(std::chrono::microseconds(spin), kRounds);
    const std::string name = spin == 0 ? std::string("serialize, both sleep (handover spin 0)")
                                       : "serialize, handover spin " + std::to_string(spin) + " us";
    std::printf("%-44s %10.2f %10.2f %10zu\n", name.c_str(), s.p50, s.p99, s.count);
  }
}

void print_handover_table() {
  constexpr int kRounds = 20000;
  std::printf("\nHand-over latency between two threads taking turns (%d rounds each)\n", kRounds);
  std::printf("%-44s %10s %10s %10s\n", "mechanism", "p50 us", "p99 us", "samples");
  auto row = [](const char* name, const LatencySummary& s) {
    std::printf("%-44s %10.2f %10.2f %10zu\n", name, s.p50, s.p99, s.count);
  };
  row("serialize, waiter spins (BATON_TURN_SPIN_US=50)",
      serialize_handover(options_for(TurnPolicy::serialize, std::chrono::microseconds(50)),
                         kRounds));
  row("serialize, waiter parks at once (spin 0)",
      serialize_handover(options_for(TurnPolicy::serialize, std::chrono::microseconds(0)),
                         kRounds / 4));
  const std::string name = bench_segment_name();
  row("host turn, two threads of one process",
      serialize_handover(host_options_for(std::chrono::microseconds(50), name), kRounds));
  row("host turn, two threads, waiter parks at once",
      serialize_handover(host_options_for(std::chrono::microseconds(0), name), kRounds / 4));
  HostSegment::remove(name);
  row("host turn, two processes (parent's side)",
      host_process_handover(std::chrono::microseconds(50), kRounds));
  row("host turn, two processes, waiter parks at once",
      host_process_handover(std::chrono::microseconds(0), kRounds / 4));
  row("mutex + condition variable", condition_variable_handover(kRounds / 4));
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("command: %s\n", argv[0]);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  baton::print_handover_table();
  baton::print_device_gap_table();
  return 0;
}
