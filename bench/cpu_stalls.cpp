// cpu_stalls: how long a busy thread can be kept off its core on this machine. N threads
// spin reading the clock for a few seconds each; the table gives each count's longest gap
// between two reads and the gaps over 50 ms. On a VM the host can take a vCPU away for
// its own scheduling period, which the CPU backend's slowdown floor must stay above.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

struct Gaps {
  double worst_ms = 0.0;
  int over_50ms = 0;
};

Gaps spin(std::chrono::duration<double> length) {
  using Clock = std::chrono::steady_clock;
  Gaps gaps;
  const auto start = Clock::now();
  for (auto last = start, now = start; now - start < length; last = now) {
    now = Clock::now();
    const double gap_ms = std::chrono::duration<double, std::milli>(now - last).count();
    gaps.worst_ms = std::max(gaps.worst_ms, gap_ms);
    if (gap_ms > 50.0) ++gaps.over_50ms;
  }
  return gaps;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10.0;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("| busy threads | seconds | longest gap ms | gaps > 50 ms |\n|---|---|---|---|\n");
  for (unsigned threads = 1; threads <= cores + 1; ++threads) {
    std::vector<Gaps> gaps(threads);
    {
      std::vector<std::jthread> workers;
      for (unsigned i = 0; i < threads; ++i) {
        workers.emplace_back(
            [&gaps, i, seconds] { gaps[i] = spin(std::chrono::duration<double>(seconds)); });
      }
    }
    Gaps all;
    for (const Gaps& g : gaps) {
      all.worst_ms = std::max(all.worst_ms, g.worst_ms);
      all.over_50ms += g.over_50ms;
    }
    std::printf("| %u | %.0f | %.1f | %d |\n", threads, seconds, all.worst_ms, all.over_50ms);
  }
  return 0;
}
