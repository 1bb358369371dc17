// The sampler's cost per token over a vocabulary of Qwen2.5's size (151936), on the host:
// what every generated token pays after its step (sampled requests on any backend; greedy
// ones on the CPU backend). Usage: sampler_bench. Prints ms per token, mean of 50 draws,
// for greedy (alone and with top_logprobs), temperature 0.8, with top-p 0.9, and with
// top-k 40, and for the CPU runner's own greedy pick.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "baton/model/output/sampler.h"

namespace {

// Prints the mean time of 50 calls of `draw` (a token id each, summed into a checksum that
// keeps them from being optimized away).
template <typename Draw>
void report(const char* name, Draw draw) {
  constexpr int kDraws = 50;
  long long checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kDraws; ++i) checksum += draw();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-28s %12.3f   (checksum %lld)\n", name, ms / kDraws, checksum);
}

}  // namespace

int main() {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(151936);
  for (float& l : logits) l = normal(rng);
  struct Mode {
    const char* name;
    baton::SamplingParams params;
  };
  const Mode modes[] = {
      {.name = "greedy", .params = {.temperature = 0.0}},
      {.name = "greedy, top_logprobs 1", .params = {.temperature = 0.0, .top_logprobs = 1}},
      {.name = "greedy, top_logprobs 5", .params = {.temperature = 0.0, .top_logprobs = 5}},
      {.name = "temperature 0.8", .params = {.temperature = 0.8}},
      {.name = "temperature 0.8, top-p 0.9", .params = {.temperature = 0.8, .top_p = 0.9}},
      {.name = "temperature 0.8, top-k 40", .params = {.temperature = 0.8, .top_k = 40}}};
  std::printf("%-28s %12s\n", "sampling", "ms / token");
  for (const Mode& mode : modes) {
    baton::SamplingParams params = mode.params;
    params.seed = 7;
    baton::Sampler sampler(params);
    report(mode.name, [&] { return sampler.next(logits, {}, {}).id; });
  }
  // What the CPU runner picks itself for plain greedy requests, without a Sampler.
  report("greedy_token (CPU runner)", [&] { return baton::greedy_token(logits).token; });
  return 0;
}
