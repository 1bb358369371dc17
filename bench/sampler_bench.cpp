// The sampler's cost per token over a vocabulary of Qwen2.5's size (151936), on the host:
// what every generated token pays after its step (sampled requests on any backend; greedy
// ones on the CPU backend). Usage: sampler_bench. Prints ms per token, mean of 50 draws,
// for greedy, temperature 0.8, with top-p 0.9, and with top-k 40.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "baton/model/sampler.h"

int main() {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(151936);
  for (float& l : logits) l = normal(rng);
  struct Mode {
    const char* name;
    baton::SamplingParams params;
  };
  const Mode modes[] = {{"greedy", {.temperature = 0.0}},
                        {"temperature 0.8", {.temperature = 0.8}},
                        {"temperature 0.8, top-p 0.9", {.temperature = 0.8, .top_p = 0.9}},
                        {"temperature 0.8, top-k 40", {.temperature = 0.8, .top_k = 40}}};
  std::printf("%-28s %12s\n", "sampling", "ms / token");
  for (const Mode& mode : modes) {
    baton::SamplingParams params = mode.params;
    params.seed = 7;
    baton::Sampler sampler(params);
    constexpr int kDraws = 50;
    long long checksum = 0;  // keeps the draws from being optimized away
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kDraws; ++i) checksum += sampler.next(logits, {}, {}).id;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-28s %12.3f   (checksum %lld)\n", mode.name, ms / kDraws, checksum);
  }
  return 0;
}
