// The LLM engine's CPU speed against the memory-bandwidth bound of the machine it runs on.
// Usage: llm_cpu_bench MODEL_DIR [PROMPT_TOKENS [DECODE_TOKENS]]
// Measures, through LlmEngine (the path `baton generate` and a server take):
//   - prefill tokens/s of a PROMPT_TOKENS prompt (default 512), and the time to the first
//     token when the same prompt comes again (served from the prefix cache);
//   - decode tokens/s of one sequence over DECODE_TOKENS steps (default 32), and of 4 and
//     16 sequences decoding together (the batch shares each read of the weights);
//   - the read bandwidth of this machine (summing 1 GiB, far beyond any cache, on as many
//     threads as the model's kernels use), and from it the decode bound:
//     every step must read every weight once, so tokens/s <= bandwidth / weight bytes.
// Prints a table; every figure is measured here, nothing is assumed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "baton/engine/llm_engine.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/turn/make_turn.h"

namespace {

using baton::GenerationResult;

// Best of 3 passes of summing `bytes` of memory on `threads` threads, in GB/s.
double read_bandwidth_gbs(std::size_t bytes, int threads) {
  std::vector<float> data(bytes / sizeof(float), 1.0f);
  double best = 0.0;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<double> sums(static_cast<std::size_t>(threads));
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    const std::size_t slice = data.size() / static_cast<std::size_t>(threads);
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const float* p = data.data() + static_cast<std::size_t>(t) * slice;
        float acc[8] = {};
        for (std::size_t i = 0; i + 8 <= slice; i += 8) {
          for (int k = 0; k < 8; ++k) acc[k] += p[i + k];
        }
        sums[static_cast<std::size_t>(t)] = std::accumulate(acc, acc + 8, 0.0);
      });
    }
    for (std::thread& w : workers) w.join();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (std::accumulate(sums.begin(), sums.end(), 0.0) <= 0.0) std::abort();  // keep the reads
    best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  return best;
}

std::vector<baton::TokenId> prompt_of(int count, std::int64_t vocab) {
  std::vector<baton::TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back(static_cast<baton::TokenId>((i * 7919 + 13) % vocab));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: llm_cpu_bench MODEL_DIR [PROMPT_TOKENS [DECODE_TOKENS]]\n");
    return 2;
  }
  const int prompt_tokens = argc > 2 ? std::atoi(argv[2]) : 512;
  const int decode_tokens = argc > 3 ? std::atoi(argv[3]) : 32;
  const baton::LlamaModel model = baton::LlamaModel::load(argv[1]);
  baton::cpu::CpuDevice device{baton::CommitLimits{}};
  const auto turn = baton::make_turn(baton::TurnOptions{}, device.default_stream());
  baton::LlmBatchOptions options;
  options.prefill_chunk = prompt_tokens;  // one step: the prefill figure is the model's
  options.kv_budget_bytes = std::size_t{1} << 30;
  baton::LlmEngine engine("bench", model, nullptr, options, device.create_stream("bench"), *turn);

  const auto request = [&](int prompt, int tokens) {
    baton::GenerationRequest r{1, prompt_of(prompt, model.config().vocab_size), {}};
    r.params.sampling.temperature = 0.0;
    r.params.max_tokens = tokens;
    r.params.ignore_eos = true;
    return r;
  };
  const auto run = [&](int prompt, int tokens) {
    return engine.submit(request(prompt, tokens)).get();
  };
  // `batch` requests at once: prefilled in one step, then decoded in lockstep. Tokens/s of
  // the whole batch.
  const auto batch_decode = [&](int batch) {
    std::vector<std::future<GenerationResult>> futures;
    for (int i = 0; i < batch; ++i)
      futures.push_back(engine.submit(request(16, decode_tokens + 1)));
    double slowest = 0.0;
    for (auto& f : futures) slowest = std::max(slowest, f.get().decode_ms);
    return batch * decode_tokens * 1000.0 / slowest;
  };
  run(16, 2);  // warm-up: page in the weights
  const GenerationResult result = run(prompt_tokens, decode_tokens + 1);
  const double prefill_tps = prompt_tokens * 1000.0 / result.prefill_ms;
  const double decode_tps = decode_tokens * 1000.0 / result.decode_ms;
  const GenerationResult retry = run(prompt_tokens, 2);  // the same prompt: prefix cache
  const double batch4_tps = batch_decode(4);
  const double batch16_tps = batch_decode(16);
  const std::size_t weight_bytes = model.weight_bytes();
  const double bandwidth = read_bandwidth_gbs(std::size_t{1} << 30, model.pool().threads());
  const double bound = bandwidth * 1e9 / static_cast<double>(weight_bytes);

  const baton::ModelConfig& c = model.config();
  std::printf("model: %s, %lld layers, hidden %lld, vocab %lld, dtype %s, %d threads\n",
              std::string(baton::to_string(c.arch)).c_str(), static_cast<long long>(c.num_layers),
              static_cast<long long>(c.hidden_size), static_cast<long long>(c.vocab_size),
              c.dtype.c_str(), model.pool().threads());
  std::printf("| measure | value |\n|---|---|\n");
  std::printf("| weights read per decode step | %.3f GB |\n", weight_bytes / 1e9);
  std::printf("| prefill, %d-token prompt | %.1f ms, %.1f tokens/s |\n", prompt_tokens,
              result.prefill_ms, prefill_tps);
  std::printf("| the same prompt again (prefix cache: %d tokens reused) | %.1f ms |\n",
              retry.cached_prompt_tokens, retry.prefill_ms);
  std::printf("| decode, batch 1, %d steps | %.1f ms/token, %.2f tokens/s |\n", decode_tokens,
              result.decode_ms / decode_tokens, decode_tps);
  std::printf("| decode, batch 4 (continuous batching) | %.2f tokens/s |\n", batch4_tps);
  std::printf("| decode, batch 16 | %.2f tokens/s |\n", batch16_tps);
  std::printf("| read bandwidth (1 GiB, %d threads) | %.1f GB/s |\n", model.pool().threads(),
              bandwidth);
  std::printf("| decode bound (bandwidth / weight bytes) | %.2f tokens/s |\n", bound);
  std::printf("| decode / bound | %.0f %% |\n", 100.0 * decode_tps / bound);
  return 0;
}
