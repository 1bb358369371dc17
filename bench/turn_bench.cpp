// turn_bench: what the GPU turn costs.
//  1. Uncontended acquire+release per policy (Google Benchmark).
//  2. Hand-over latency between two threads that take turns (printed as a table):
//     serialize with spinning waiters, serialize with waiters that park at once, and a
//     plain mutex + condition variable hand-over for comparison.
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdio>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/common/clock.h"
#include "baton/common/percentiles.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/make_turn.h"

namespace baton {
namespace {

TurnOptions options_for(TurnPolicy policy, std::chrono::microseconds spin) {
  TurnOptions options;
  options.policy = policy;
  options.spin = spin;
  return options;
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

// A 2 us busy hold, like a tiny burst.
void hold_briefly() {
  const std::int64_t until = now_ns() + 2000;
  while (now_ns() < until) {
  }
}

// Two threads alternate holding a serialize turn; returns hand-over latency in us.
LatencySummary serialize_handover(std::chrono::microseconds spin, int rounds) {
  cpu::CpuDevice device(CommitLimits{});
  auto a = device.create_stream("a");
  auto b = device.create_stream("b");
  auto turn = make_turn(options_for(TurnPolicy::serialize, spin), device.default_stream());
  const TurnClientId ids[] = {turn->register_client("a", *a), turn->register_client("b", *b)};
  std::latch start(2);
  auto loop = [&turn, &start, rounds](TurnClientId id) {
    start.arrive_and_wait();
    for (int r = 0; r < rounds; ++r) {
      turn->acquire(id, BurstKind::decode);
      hold_briefly();  // the other thread is in line by the time this one releases
      turn->release(id);
    }
  };
  std::thread ta(loop, ids[0]);
  std::thread tb(loop, ids[1]);
  ta.join();
  tb.join();
  return turn->stats().handover_us;
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

void print_handover_table() {
  constexpr int kRounds = 20000;
  std::printf("\nHand-over latency between two threads taking turns (%d rounds each)\n", kRounds);
  std::printf("%-44s %10s %10s %10s\n", "mechanism", "p50 us", "p99 us", "samples");
  auto row = [](const char* name, const LatencySummary& s) {
    std::printf("%-44s %10.2f %10.2f %10zu\n", name, s.p50, s.p99, s.count);
  };
  row("serialize, waiter spins (BATON_TURN_SPIN_US=50)",
      serialize_handover(std::chrono::microseconds(50), kRounds));
  row("serialize, waiter parks at once (spin 0)",
      serialize_handover(std::chrono::microseconds(0), kRounds / 4));
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
  return 0;
}
