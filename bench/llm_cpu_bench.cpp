// The LLM engine's CPU speed against the limits of the machine it runs on, measured in the
// same run. Usage:
//   llm_cpu_bench MODEL_DIR [--prompt-tokens N] [--generate N] [--weights bf16|f32|q8]
//                 [--profile-context N] [--skip-limits] [--skip-pair]
// Prints tables:
//   - the limits: read bandwidth (best of a few streaming kernels) and FMA peak, on 1
//     thread and on the kernels' threads (bench/machine_limits.h);
//   - through LlmEngine (the path of `baton generate` and a server): prefill of a prompt of
//     N tokens (default 512) against the FMA bound, the same prompt again (prefix cache),
//     decode of one sequence for --generate steps (default 64) against the bandwidth
//     bound (every step reads every weight once), and 4 and 16 sequences decoding together;
//   - a per-op profile (forward_pass.h's StepProfile) of a decode step at a context of
//     --profile-context tokens (default 1024) and of the prefill;
//   - two engines (two loads, two kernel pools) decoding side by side: each one's share.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "baton/engine/llm/llm_engine.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/make_runner.h"
#include "baton/model/cpu/forward_pass.h"
#include "baton/model/cpu/kernels/blas_kernels.h"
#include "baton/model/cpu/kernels/simd_kernels.h"
#include "baton/model/cpu/step_profile.h"
#include "baton/model/output/sampler.h"
#include "baton/turn/make_turn.h"
#include "machine_limits.h"

namespace {

using baton::GenerationResult;
using baton::LlamaModel;

struct Options {
  std::string model;
  int prompt_tokens = 512;
  int generate = 64;
  baton::WeightFormat weights = baton::WeightFormat::bf16;
  int profile_context = 1024;
  bool limits = true;
  bool pair = true;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--prompt-tokens") {
      o.prompt_tokens = std::stoi(value());
    } else if (a == "--generate") {
      o.generate = std::stoi(value());
    } else if (a == "--weights") {
      const std::string w = value();
      const auto f = baton::parse_weight_format(w);
      if (!f) throw std::invalid_argument("--weights must be bf16, f32 or q8, not " + w);
      o.weights = *f;
    } else if (a == "--profile-context") {
      o.profile_context = std::stoi(value());
    } else if (a == "--skip-limits") {
      o.limits = false;
    } else if (a == "--skip-pair") {
      o.pair = false;
    } else if (o.model.empty() && a.rfind("--", 0) != 0) {
      o.model = a;
    } else {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  if (o.model.empty()) throw std::invalid_argument("MODEL_DIR is missing");
  return o;
}

std::vector<baton::TokenId> prompt_of(int count, std::int64_t vocab) {
  std::vector<baton::TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back(static_cast<baton::TokenId>((i * 7919 + 13) % vocab));
  return t;
}

// One engine on its own CPU device and turn.
struct Bench {
  explicit Bench(const LlamaModel& m, int prompt_tokens)
      : model(m), turn(baton::make_turn(baton::TurnOptions{}, device.default_stream())) {
    baton::LlmBatchOptions options;
    options.prefill_chunk = std::max(prompt_tokens, 16);  // one step: the model's prefill figure
    options.kv_budget_bytes = std::size_t{1} << 30;
    engine.emplace("bench", model, nullptr, options, device.create_stream("bench"), *turn,
                   baton::cpu_runner_factory());
  }
  GenerationResult run(int prompt, int tokens) {
    baton::GenerationRequest r{
        .id = 1, .prompt = prompt_of(prompt, model.config().vocab_size), .params = {}};
    r.params.sampling.temperature = 0.0;
    r.params.max_tokens = tokens;
    r.params.ignore_eos = true;
    return engine->submit(std::move(r)).get();
  }
  // `batch` requests at once, prefilled together and then decoded in lockstep: tokens/s
  // of the whole batch.
  double batch_decode(int batch, int steps) {
    std::vector<std::future<double>> done;
    for (int i = 0; i < batch; ++i) {
      done.push_back(
          std::async(std::launch::async, [this, steps] { return run(16, steps + 1).decode_ms; }));
    }
    double slowest = 0.0;
    for (auto& f : done) slowest = std::max(slowest, f.get());
    return batch * steps * 1000.0 / slowest;
  }
  const LlamaModel& model;
  baton::cpu::CpuDevice device{baton::CommitLimits{}};
  std::unique_ptr<baton::GpuTurn> turn;
  std::optional<baton::LlmEngine> engine;
};

// Multiply-adds of one token through the matrices (2 FLOPs each), and of attention over
// `context` positions (q.k and p.v), for one token.
double matrix_flops_per_token(const LlamaModel& m) {
  return 2.0 * static_cast<double>(m.weight_count() -
                                   m.output().rows() * static_cast<std::size_t>(m.output().cols()));
}
double attention_flops(const baton::ModelConfig& c, double context) {
  return 4.0 * static_cast<double>(c.num_heads * c.head_dim * c.num_layers) * context;
}

// `pick_ns`: the greedy pick after each step (the host's, which the engine pays after a
// CPU step), shown as one more row; 0 for none.
void print_profile(const char* what, const baton::StepProfile& p, int steps,
                   std::int64_t pick_ns = 0) {
  const auto total = static_cast<double>(p.total_ns() + pick_ns);
  std::printf("\n%s: %.2f ms per step\n| op | ms / step | share |\n|---|---|---|\n", what,
              total / 1e6 / steps);
  const auto row = [&](const std::string& name, std::int64_t ns) {
    std::printf("| %s | %.3f | %.1f %% |\n", name.c_str(), static_cast<double>(ns) / 1e6 / steps,
                100.0 * static_cast<double>(ns) / total);
  };
  for (std::size_t i = 0; i < p.ns.size(); ++i) {
    row(std::string(baton::step_op_name(static_cast<baton::StepOp>(i))), p.ns[i]);
  }
  if (pick_ns > 0) row("greedy pick (log-softmax of the token)", pick_ns);
}

// A decode step at `context` and a prefill of `prompt` tokens, op by op.
void profile(const LlamaModel& model, int context, int prompt) {
  const std::int64_t vocab = model.config().vocab_size;
  baton::KvCache cache(model.config(), context + 32);
  baton::forward(model, prompt_of(context, vocab), cache, {}, baton::LogitsFor::last_token);
  baton::StepProfile decode;
  constexpr int kSteps = 16;
  std::int64_t pick_ns = 0;
  for (int s = 0; s < kSteps; ++s) {
    const std::vector<baton::TokenId> token{static_cast<baton::TokenId>((s * 31 + 7) % vocab)};
    const std::vector<float> logits =
        baton::forward(model, token, cache, {}, baton::LogitsFor::last_token, &decode);
    const auto start = std::chrono::steady_clock::now();
    const baton::GreedyToken picked = baton::greedy_token(logits);
    pick_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count();
    if (!picked.finite) throw std::runtime_error("non-finite logits in the profile's step");
  }
  print_profile(("decode step at a context of " + std::to_string(context)).c_str(), decode, kSteps,
                pick_ns);
  baton::KvCache fresh(model.config(), prompt);
  baton::StepProfile prefill;
  baton::forward(model, prompt_of(prompt, vocab), fresh, {}, baton::LogitsFor::last_token,
                 &prefill);
  print_profile(("prefill of " + std::to_string(prompt) + " tokens").c_str(), prefill, 1);
}

// Two engines of two loads decoding at once: each one's tokens/s.
void pair(const Options& o, double alone) {
  const LlamaModel second = LlamaModel::load(o.model, {.weights = o.weights});
  const LlamaModel third = LlamaModel::load(o.model, {.weights = o.weights});
  Bench a(second, 16), b(third, 16);
  a.run(16, 2);
  b.run(16, 2);
  auto fa = std::async(std::launch::async, [&] { return a.run(16, o.generate + 1); });
  auto fb = std::async(std::launch::async, [&] { return b.run(16, o.generate + 1); });
  const double ta = o.generate * 1000.0 / fa.get().decode_ms;
  const double tb = o.generate * 1000.0 / fb.get().decode_ms;
  std::printf("\ntwo engines decoding side by side (batch 1 each; alone: %.2f tokens/s)\n", alone);
  std::printf("| engine | tokens/s | share of the two |\n|---|---|---|\n");
  std::printf("| A | %.2f | %.0f %% |\n| B | %.2f | %.0f %% |\n| together | %.2f | |\n", ta,
              100.0 * ta / (ta + tb), tb, 100.0 * tb / (ta + tb), ta + tb);
}

}  // namespace

int main(int argc, char** argv) try {
  baton::reexec_with_fitting_blas_kernels(argv);
  const Options o = parse(argc, argv);
  const LlamaModel model = LlamaModel::load(o.model, {.weights = o.weights});
  const int threads = model.pool().threads();
  const baton::ModelConfig& c = model.config();
  std::printf(
      "model: %s, %lld layers, hidden %lld, vocab %lld, file dtype %s, weights %s, "
      "%d threads, kernels %s, OpenBLAS %s\n",
      std::string(baton::to_string(c.arch)).c_str(), static_cast<long long>(c.num_layers),
      static_cast<long long>(c.hidden_size), static_cast<long long>(c.vocab_size), c.dtype.c_str(),
      std::string(baton::to_string(o.weights)).c_str(), threads,
      std::string(baton::simd_kernels().name).c_str(), openblas_get_corename());

  Bench bench(model, o.prompt_tokens);
  bench.run(16, 2);  // warm-up: page in the weights
  const GenerationResult result = bench.run(o.prompt_tokens, o.generate + 1);
  const GenerationResult retry = bench.run(o.prompt_tokens, 2);  // the prefix cache
  const double prefill_tps = o.prompt_tokens * 1000.0 / result.prefill_ms;
  const double decode_tps = o.generate * 1000.0 / result.decode_ms;
  const double batch4 = bench.batch_decode(4, o.generate);
  const double batch16 = bench.batch_decode(16, o.generate);

  baton::bench::Bandwidth bw1, bwn;
  baton::bench::FmaPeak peak1, peakn, pairs1, pairsn, tiles1, tilesn;
  if (o.limits) {
    bw1 = baton::bench::read_bandwidth(std::size_t{1} << 30, 1);
    bwn = baton::bench::read_bandwidth(std::size_t{1} << 30, threads);
    peak1 = baton::bench::fma_peak(1);
    peakn = baton::bench::fma_peak(threads);
    pairs1 = baton::bench::bf16_pair_peak(1);
    pairsn = baton::bench::bf16_pair_peak(threads);
    tiles1 = baton::bench::amx_bf16_peak(1);
    tilesn = baton::bench::amx_bf16_peak(threads);
  }
  // The prefill's bound: the tile peak where the kernel set multiplies on AMX tiles, else
  // the bf16 pair peak where it multiplies bf16 pairs, else the FMA peak.
  const baton::SimdKernels& simd = baton::simd_kernels();
  const bool bf16 = o.weights == baton::WeightFormat::bf16;
  const bool tiles_bound = bf16 && simd.dot_tiled_bf16x_rows != nullptr && tilesn.gflops > 0.0;
  const bool pairs_bound = bf16 && simd.dot_bf16x_rows != nullptr && pairsn.gflops > 0.0;
  const double prefill_peak =
      tiles_bound ? tilesn.gflops : (pairs_bound ? pairsn.gflops : peakn.gflops);
  const char* prefill_peak_name = tiles_bound ? "AMX tile" : (pairs_bound ? "bf16 pair" : "FMA");
  const double bytes = static_cast<double>(model.weight_bytes());
  const double decode_bound = bwn.gbs * 1e9 / bytes;
  const double prefill_flops =
      matrix_flops_per_token(model) * o.prompt_tokens +
      attention_flops(c, o.prompt_tokens * (o.prompt_tokens + 1) / 2.0) +
      2.0 * static_cast<double>(c.vocab_size * c.hidden_size);  // the last token's logits
  const double prefill_gflops = prefill_flops / result.prefill_ms / 1e6;

  std::printf("| measure | value |\n|---|---|\n");
  if (o.limits) {
    std::printf("| read bandwidth, 1 thread (%s) | %.1f GB/s |\n", bw1.kernel.c_str(), bw1.gbs);
    std::printf("| read bandwidth, %d threads (%s) | %.1f GB/s |\n", threads, bwn.kernel.c_str(),
                bwn.gbs);
    std::printf("| FMA peak, 1 thread (%s) | %.1f GFLOP/s |\n", peak1.isa.c_str(), peak1.gflops);
    std::printf("| FMA peak, %d threads | %.1f GFLOP/s |\n", threads, peakn.gflops);
    if (pairsn.gflops > 0.0) {
      std::printf("| bf16 pair peak, 1 thread (vdpbf16ps) | %.1f GFLOP/s |\n", pairs1.gflops);
      std::printf("| bf16 pair peak, %d threads | %.1f GFLOP/s |\n", threads, pairsn.gflops);
    }
    if (tilesn.gflops > 0.0) {
      std::printf("| AMX tile peak, 1 thread (tdpbf16ps) | %.1f GFLOP/s |\n", tiles1.gflops);
      std::printf("| AMX tile peak, %d threads | %.1f GFLOP/s |\n", threads, tilesn.gflops);
    }
  }
  std::printf("| weights read per decode step | %.3f GB |\n", bytes / 1e9);
  std::printf("| prefill, %d-token prompt | %.1f ms, %.1f tokens/s, %.1f GFLOP/s |\n",
              o.prompt_tokens, result.prefill_ms, prefill_tps, prefill_gflops);
  std::printf("| the same prompt again (prefix cache: %d tokens reused) | %.1f ms |\n",
              retry.cached_prompt_tokens, retry.prefill_ms);
  std::printf("| decode, batch 1, %d steps | %.1f ms/token, %.2f tokens/s |\n", o.generate,
              result.decode_ms / o.generate, decode_tps);
  std::printf("| decode, batch 4 | %.2f tokens/s |\n| decode, batch 16 | %.2f tokens/s |\n", batch4,
              batch16);
  if (o.limits) {
    std::printf("| decode bound (bandwidth / weight bytes) | %.2f tokens/s |\n", decode_bound);
    std::printf("| decode batch 1 / bound | %.0f %% |\n", 100.0 * decode_tps / decode_bound);
    std::printf("| prefill / %s peak | %.0f %% |\n", prefill_peak_name,
                100.0 * prefill_gflops / prefill_peak);
  }
  std::printf(
      "json: {\"prefill_tokens_per_s\": %.2f, \"decode_tokens_per_s\": %.2f, "
      "\"bandwidth_gbs\": %.2f, \"fma_gflops\": %.1f}\n",
      prefill_tps, decode_tps, bwn.gbs, peakn.gflops);
  if (o.profile_context > 0) profile(model, o.profile_context, o.prompt_tokens);
  if (o.pair) pair(o, decode_tps);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "llm_cpu_bench: %s\n", e.what());
  return 2;
}
