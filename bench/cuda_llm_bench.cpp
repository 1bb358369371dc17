// The LLM engine on the GPU against the memory-bandwidth roofline of the GPU it runs on.
// Usage: cuda_llm_bench MODEL_DIR [MODEL_DIR...]
// Measures, through LlmEngine on the CUDA backend (the path `baton serve --backend cuda`
// takes: the GPU turn, the watchdog and the host's runner):
//   - the device-to-device copy rate (bytes read plus written, 2 GiB buffers, median of
//     10), and from it the decode roofline: each step reads every weight once (the output
//     matrix whole, one embedding row per token), so tokens/s <= batch * rate / bytes;
//   - decode tokens/s at batch 1, 8 and 32 (128-token prompts, 64 tokens each, greedy;
//     the median of 3 runs), from the requests' first-to-last-token times;
//   - long contexts: decode tokens/s at batch 1 after 8K- and 32K-token prompts and at batch
//     32 after 8K, against a roofline that counts each step's KV bytes too (each row's
//     keys and values at its mean length over the 64 tokens), where the model's context
//     holds them;
//   - prefill tokens/s of 2048- and 8192-token prompts in one chunk (median of 3), from
//     admission to the first token;
//   - the runner alone at batch 1 (no engine, no turn): its step time with a buffer per
//     layer and with one buffer per step, and the host time its ops take to launch.
// BATON_BENCH_WEIGHTS=fp8: the same table with the matrices in E4M3 on the device
// (`--weights fp8`; the roofline counts their bytes), then its accuracy against the same
// model in bf16 through the runner, as bench/q8_accuracy measures q8 on the CPU: top-1
// agreement and mean log-prob gap over 128 teacher-forced tokens after a fixed prompt
// (bench/logit_agreement.h), and how long fp8's own greedy tokens equal bf16's.
// BATON_BENCH_WEIGHTS=q8: the same with the matrices quantized to Q8_0 on the host
// (`--weights q8`) and kept 8-bit on the device, as a Q8_0 GGUF file's are.
// BATON_BENCH_QUICK=1: decode at batch 1, 8 and 32 only (and the 8-bit accuracy).
// BATON_BENCH_DETERMINISTIC=1: the engine with `--deterministic` (rows named "det").
// BATON_BENCH_PROFILE=N: instead, one warm decode step of N sequences (1 for any text but a
// number) of the runner per model between cudaProfilerStart and Stop, for `ncu
// --profile-from-start off` (scripts/device-cuda-llm); BATON_BENCH_PROFILE=prefill: one
// 2048-token prefill instead.
// Prints one table; every figure is measured in this run.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/gpu/cuda/cuda_error.h"
#include "baton/gpu/cuda/cuda_handles.h"
#include "baton/host/engine_host.h"
#include "baton/host/make_device.h"
#include "baton/model/cuda/cuda_model_runner.h"
#include "baton/model/weights/weight_format.h"
#include "logit_agreement.h"

namespace {

using baton::GenerationResult;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Bytes read plus bytes written per second by cudaMemcpy device to device, in GB/s.
double copy_rate_gbs() {
  const std::size_t bytes = std::size_t{2} << 30;
  baton::cuda::DeviceBuffer from(bytes), to(bytes);
  BATON_CUDA_CHECK(cudaMemset(from.get(), 1, bytes));
  cudaEvent_t a = nullptr, b = nullptr;
  BATON_CUDA_CHECK(cudaEventCreate(&a));
  BATON_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> rates;
  for (int i = 0; i < 13; ++i) {
    BATON_CUDA_CHECK(cudaEventRecord(a));
    BATON_CUDA_CHECK(cudaMemcpy(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice));
    BATON_CUDA_CHECK(cudaEventRecord(b));
    BATON_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0.0f;
    BATON_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 3) rates.push_back(2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  (void)cudaEventDestroy(a);
  (void)cudaEventDestroy(b);
  return median(rates);
}

std::vector<baton::TokenId> prompt_of(int count, int salt, std::int64_t vocab) {
  std::vector<baton::TokenId> t;
  for (int i = 0; i < count; ++i) {
    t.push_back(static_cast<baton::TokenId>((i * 7919 + salt * 104729 + 13) % vocab));
  }
  return t;
}

baton::GenerationRequest request(std::uint64_t id, std::vector<baton::TokenId> prompt,
                                 int max_tokens) {
  baton::GenerationRequest r{.id = id, .prompt = std::move(prompt), .params = {}};
  r.params.sampling.temperature = 0.0;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

std::vector<GenerationResult> run_all(baton::LlmEngine& engine,
                                      std::vector<baton::GenerationRequest> requests) {
  std::vector<std::future<GenerationResult>> futures;
  for (auto& r : requests) futures.push_back(engine.submit(std::move(r)));
  std::vector<GenerationResult> results;
  for (auto& f : futures) results.push_back(f.get());
  return results;
}

constexpr int kDecodeTokens = 64;
std::uint64_t next_id = 1;

// Tokens/s while all `batch` requests decode together: the steps from the last one's first
// token to the first one's last, each `batch` tokens, timed by the request that ends first
// (its tokens are one a step; counting every request's tokens in a time window would
// depend on their order within a step). Long prompts prefill one after another, each step
// of them a decode token for the requests already in: those steps are prefill's, not
// decode's, so each request asks for `batch` tokens more to keep kDecodeTokens steps or so
// of all of them decoding.
double decode_tokens_per_s(baton::LlmEngine& engine, int batch, std::int64_t vocab,
                           int context = 128) {
  std::vector<double> rates;
  for (int run = 0; run < 3; ++run) {
    std::vector<baton::GenerationRequest> requests;
    // Written on the engine thread, read after the futures are ready.
    std::vector<std::vector<std::chrono::steady_clock::time_point>> made(
        static_cast<std::size_t>(batch));
    for (int i = 0; i < batch; ++i) {
      requests.push_back(request(next_id, prompt_of(context, static_cast<int>(next_id), vocab),
                                 kDecodeTokens + batch + 1));
      requests.back().on_token = [&times =
                                      made[static_cast<std::size_t>(i)]](const baton::TokenDelta&) {
        times.push_back(std::chrono::steady_clock::now());
      };
      ++next_id;
    }
    (void)run_all(engine, std::move(requests));
    if (std::any_of(made.begin(), made.end(), [](const auto& t) { return t.empty(); })) {
      throw std::runtime_error("decode: a request made no token");
    }
    auto from = made.front().front();
    for (const auto& times : made) from = std::max(from, times.front());
    const auto& first_done = *std::min_element(
        made.begin(), made.end(), [](const auto& a, const auto& b) { return a.back() < b.back(); });
    const auto start = std::upper_bound(first_done.begin(), first_done.end(), from);
    const auto steps = std::distance(start, first_done.end()) - 1;
    if (steps < 1) throw std::runtime_error("decode: no step when every request decoded");
    rates.push_back(static_cast<double>(batch) * static_cast<double>(steps) /
                    std::chrono::duration<double>(first_done.back() - *start).count());
  }
  return median(rates);
}

double prefill_tokens_per_s(baton::LlmEngine& engine, int tokens, std::int64_t vocab) {
  std::vector<double> rates;
  for (int run = 0; run < 3; ++run) {
    std::vector<baton::GenerationRequest> one;
    one.push_back(request(next_id, prompt_of(tokens, static_cast<int>(next_id), vocab), 1));
    ++next_id;
    const GenerationResult r = run_all(engine, std::move(one)).front();
    rates.push_back(tokens / (r.prefill_ms / 1e3));
  }
  return median(rates);
}

// A CUDA runner alone (no engine, no turn) on a stream of its own, over a KV pool of
// `pool_bytes` in 16-token blocks.
struct LoneRunner {
  LoneRunner(const baton::LlamaModel& model, std::size_t pool_bytes)
      : pool(model.config(), 16, pool_bytes),
        device(baton::make_device("cuda")),
        stream(device->create_stream("runner")),
        runner(std::make_shared<const baton::cuda::CudaModel>(model), pool,
               dynamic_cast<baton::cuda::CudaStream&>(*stream)) {}

  // A sequence with blocks for `positions` tokens.
  baton::KvSequence sequence(int positions) {
    baton::KvSequence kv;
    for (int b = 0; b * 16 < positions; ++b) kv.blocks.push_back(*pool.allocate());
    return kv;
  }

  // One step: every layer queued on the stream, then waited for.
  baton::StepResult run(baton::StepPlan plan) {
    const std::shared_ptr<baton::ModelStep> s = runner.begin(std::move(plan), 1.0);
    for (int i = 0; i < s->layers(); ++i) {
      stream->encode(baton::Op{.run = [s, i] { s->run_layer(i); }, .bytes = 0});
    }
    stream->encode(baton::Op{.run = [s] { s->finish(); }, .bytes = 0});
    stream->synchronize();
    return s->take_output();
  }

  baton::KvBlockPool pool;
  std::unique_ptr<baton::Device> device;
  std::unique_ptr<baton::Stream> stream;
  baton::cuda::CudaModelRunner runner;
};

// The runner alone, batch 1 at a 128-token context, on a stream of its own: the step's
// wall time with each layer committed alone (as the engine does) and with the whole step
// in one buffer, and the host time spent launching one step's ops.
struct RunnerTimes {
  double per_layer_ms = 0.0, one_buffer_ms = 0.0, launch_ms = 0.0;
};

// With `profile_batch` > 0, the ops of one warm decode step of that many sequences run
// between cudaProfilerStart and Stop (for `ncu --profile-from-start off`), and nothing is
// timed.
RunnerTimes runner_times(const baton::LlamaModel& model, int profile_batch = 0) {
  using Clock = std::chrono::steady_clock;
  const int batch = std::max(profile_batch, 1);
  LoneRunner lone(model, std::size_t{64} << 20 << (batch > 1 ? 5 : 0));
  std::vector<baton::KvSequence> kvs;
  for (int i = 0; i < batch; ++i) kvs.push_back(lone.sequence(32 * 16));
  double launch_s = 0.0;
  // One step of `tokens[i]` for sequence i; each sequence's greedy pick.
  const auto step = [&](std::vector<std::vector<baton::TokenId>> tokens, bool one_buffer) {
    baton::StepPlan plan{.prefills = false, .output = baton::StepOutput::greedy};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      plan.prefills = plan.prefills || tokens[i].size() > 1;
      plan.sequences.push_back({std::move(tokens[i]), &kvs[i]});
    }
    const std::shared_ptr<baton::ModelStep> s = lone.runner.begin(std::move(plan), 1.0);
    for (int i = 0; i < s->layers(); ++i) {
      lone.stream->encode(baton::Op{.run =
                                   [s, i, &launch_s] {
                                     const auto t0 = Clock::now();
                                     s->run_layer(i);
                                     launch_s +=
                                         std::chrono::duration<double>(Clock::now() - t0).count();
                                   },
                               .bytes = 0});
      if (!one_buffer) lone.stream->commit();
    }
    lone.stream->encode(baton::Op{.run = [s] { s->finish(); }, .bytes = 0});
    lone.stream->synchronize();
    std::vector<std::vector<baton::TokenId>> next;
    for (const auto& pick : s->take_output().greedy) next.push_back({pick.token});
    return next;
  };
  std::vector<std::vector<baton::TokenId>> prompts;
  for (int i = 0; i < batch; ++i)
    prompts.push_back(prompt_of(128, 1 + i, model.config().vocab_size));
  std::vector<std::vector<baton::TokenId>> next = step(std::move(prompts), false);
  RunnerTimes t;
  if (profile_batch > 0) {
    for (int i = 0; i < 10; ++i) next = step(next, false);
    BATON_CUDA_CHECK(cudaProfilerStart());
    next = step(next, false);
    BATON_CUDA_CHECK(cudaProfilerStop());
    return t;
  }
  for (const bool one_buffer : {false, true}) {
    for (int i = 0; i < 5; ++i) next = step(next, one_buffer);  // warm-up
    launch_s = 0.0;
    const auto start = Clock::now();
    constexpr int kSteps = 50;
    for (int i = 0; i < kSteps; ++i) next = step(next, one_buffer);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count() / kSteps;
    (one_buffer ? t.one_buffer_ms : t.per_layer_ms) = ms;
    if (!one_buffer) t.launch_ms = launch_s * 1e3 / kSteps;
  }
  return t;
}

// One warm prefill of a `tokens`-token prompt in one chunk, its ops between
// cudaProfilerStart and Stop (BATON_BENCH_PROFILE=prefill).
void profile_prefill(const baton::LlamaModel& model, int tokens) {
  LoneRunner lone(model, std::size_t{4} << 30);
  for (const bool profiled : {false, true}) {
    baton::KvSequence kv = lone.sequence(tokens);
    baton::StepPlan plan{.sequences = {{prompt_of(tokens, 1, model.config().vocab_size), &kv}},
                         .prefills = true,
                         .output = baton::StepOutput::greedy};
    if (profiled) BATON_CUDA_CHECK(cudaProfilerStart());
    (void)lone.run(std::move(plan));
    if (profiled) BATON_CUDA_CHECK(cudaProfilerStop());
  }
}

// Bytes a decode step reads of `model`'s weights as the device holds them: every matrix
// once, of the embedding one row per token (8 bits: all but the embedding one byte a
// weight and its scales).
double step_bytes(const baton::LlamaModel& model, bool eight_bit) {
  if (!eight_bit) return static_cast<double>(model.weight_bytes());
  const baton::WeightMatrix& e = model.embedding();
  const double embedding = 2.0 * e.rows() * static_cast<double>(e.cols());
  const bool tied = &model.output() == &e;
  return static_cast<double>(model.upload_bytes()) - (tied ? 0.0 : embedding);
}

// Logits through the runner alone (no engine) of `prompt`'s last position, then of each of
// `count - 1` decode steps fed `forced` (or, empty, the model's own greedy picks, which go
// to `tokens`): [count x vocab].
std::vector<float> runner_logits(const baton::LlamaModel& model,
                                 const std::vector<baton::TokenId>& prompt, int count,
                                 const std::vector<baton::TokenId>& forced,
                                 std::vector<baton::TokenId>& tokens) {
  LoneRunner lone(model, std::size_t{1} << 30);
  baton::KvSequence kv = lone.sequence(static_cast<int>(prompt.size()) + count);
  const auto step = [&](std::vector<baton::TokenId> in) {
    return lone
        .run({.sequences = {{std::move(in), &kv}},
              .prefills = kv.length == 0,
              .output = baton::StepOutput::last_logits})
        .values;
  };
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  std::vector<float> rows = step(prompt);
  tokens.clear();
  for (int i = 0; i < count; ++i) {
    const float* last = rows.data() + static_cast<std::size_t>(i) * vocab;
    const baton::TokenId next =
        forced.empty() ? baton::bench::score(last, vocab, 0).best : forced[i];
    tokens.push_back(next);
    if (i + 1 == count) break;
    const std::vector<float> one = step({next});
    rows.insert(rows.end(), one.begin(), one.end());
  }
  return rows;
}

// 8-bit weights against the same model's bf16 on the device, as bench/q8_accuracy
// measures q8 on the CPU: the bf16 runner's greedy tokens after a fixed prompt, both
// runners' logits on them (teacher forcing), and how long the 8-bit model's own greedy
// decode keeps to bf16's.
void print_accuracy(const baton::LlamaModel& eight_bit, const std::filesystem::path& dir,
                    const std::string& name) {
  constexpr int kTokens = 128;
  const baton::LlamaModel reference = baton::LlamaModel::load(dir);
  const auto vocab = static_cast<std::size_t>(reference.config().vocab_size);
  const std::vector<baton::TokenId> prompt = baton::bench::prompt_for(dir, vocab);
  std::vector<baton::TokenId> greedy, replayed, own;
  const std::vector<float> ref_logits = runner_logits(reference, prompt, kTokens, {}, greedy);
  const std::vector<float> logits = runner_logits(eight_bit, prompt, kTokens, greedy, replayed);
  (void)runner_logits(eight_bit, prompt, kTokens, {}, own);
  const baton::bench::Agreement a = baton::bench::agreement(ref_logits, logits, greedy, vocab);
  std::printf(
      "%-28s top-1 agreement with bf16 %.1f%%, mean log-prob gap %.4f nats (%d tokens, "
      "teacher-forced); greedy = bf16 for %td / %d\n",
      (name + " accuracy").c_str(), 100.0 * a.top1, a.gap, kTokens,
      baton::bench::common_prefix(greedy, own), kTokens);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cuda_llm_bench MODEL_DIR [MODEL_DIR...]\n");
    return 2;
  }
  const char* weights = std::getenv("BATON_BENCH_WEIGHTS");  // fp8, q8 or none
  const std::optional<baton::WeightsChoice> choice =
      baton::parse_weights_choice(weights != nullptr ? weights : "bf16");
  if (!choice) {
    std::fprintf(stderr, "BATON_BENCH_WEIGHTS: '%s' is none of bf16, q8, fp8\n", weights);
    return 2;
  }
  const baton::ModelLoadOptions load_options{.weights = choice->host,
                                             .device_precision = choice->device};
  if (const char* profile = std::getenv("BATON_BENCH_PROFILE")) {  // one step per model
    for (int m = 1; m < argc; ++m) {
      const baton::LlamaModel model = baton::LlamaModel::load(argv[m], load_options);
      if (std::string(profile) == "prefill") {
        profile_prefill(model, 2048);
      } else {
        (void)runner_times(model, std::max(std::atoi(profile), 1));
      }
    }
    return 0;
  }
  const double rate = copy_rate_gbs();
  std::printf("device-to-device copy: %.0f GB/s (read + written)\n\n", rate);
  std::printf("%-28s %10s %14s %10s %8s\n", "model / measure", "tokens/s", "roofline", "of bound",
              "step ms");
  const bool quick = std::getenv("BATON_BENCH_QUICK") != nullptr;
  // `--deterministic`'s cost: decode through the batch-invariant products, prompts in
  // chunks of the runner's invariant rows (256 on CUDA).
  const bool deterministic = std::getenv("BATON_BENCH_DETERMINISTIC") != nullptr;
  for (int m = 1; m < argc; ++m) {
    const baton::LlamaModel model = baton::LlamaModel::load(argv[m], load_options);
    const std::int64_t vocab = model.config().vocab_size;
    baton::EngineHost host(baton::make_device("cuda"), baton::TurnOptions{},
                           baton::WatchdogOptions::for_backend("cuda"));
    baton::LlmBatchOptions options;
    options.max_batch = 32;
    options.prefill_chunk = 8192;
    options.prefix_cache = false;
    options.deterministic = deterministic;
    options.kv_budget_bytes = std::size_t{40} << 30;  // 32 rows of 8K tokens of the 8B shape
    baton::LlmEngine& engine = host.add_llm_engine("llm", model, nullptr, options);
    (void)decode_tokens_per_s(engine, 1, vocab);  // warm-up: cuBLAS's kernels, the workspace
    // Every matrix once, the output matrix whole; of the embedding table one row per token.
    // 8 bits on the device: fp8, or q8 as the host holds it (a Q8_0 GGUF file as stored too).
    const bool eight_bit = model.device_precision() == baton::DevicePrecision::fp8 ||
                           model.layers().front().up.stays_q8_on_device();
    const double bytes = step_bytes(model, eight_bit);
    const std::string name =
        std::filesystem::path(argv[m]).filename().string() +
        (eight_bit ? (weights != nullptr ? std::string(" ") + weights : " q8") : "") +
        (deterministic ? " det" : "");
    for (const int batch : {1, 8, 32}) {
      const double measured = decode_tokens_per_s(engine, batch, vocab);
      const double bound = batch * rate * 1e9 / bytes;
      std::printf("%-28s %10.1f %14.1f %9.1f%% %8.3f\n",
                  (name + " decode b=" + std::to_string(batch)).c_str(), measured, bound,
                  100.0 * measured / bound, 1e3 * batch / measured);
    }
    const baton::ModelConfig& c = model.config();
    if (quick) {
      std::printf("%-28s %10.2f GB per decode step\n", (name + " weights").c_str(), bytes / 1e9);
    }
    const double kv_per_token =
        2.0 * static_cast<double>(c.num_layers * c.num_kv_heads * c.head_dim) * 2;  // k and v, bf16
    for (const auto& [batch, context] :
         {std::pair{1, 8192}, std::pair{1, 32768}, std::pair{32, 8192}}) {
      if (quick || context + kDecodeTokens + 1 > c.max_position_embeddings) continue;
      const double measured = decode_tokens_per_s(engine, batch, vocab, context);
      const double step_bytes = bytes + batch * kv_per_token * (context + kDecodeTokens / 2.0);
      const double bound = batch * rate * 1e9 / step_bytes;
      std::printf("%-28s %10.1f %14.1f %9.1f%% %8.3f\n",
                  (name + " decode b=" + std::to_string(batch) + " ctx " +
                   std::to_string(context / 1024) + "K")
                      .c_str(),
                  measured, bound, 100.0 * measured / bound, 1e3 * batch / measured);
    }
    for (const int tokens : {2048, 8192}) {
      if (quick) break;
      const double measured = prefill_tokens_per_s(engine, tokens, vocab);
      std::printf("%-28s %10.0f %14s %10s %8.1f\n",
                  (name + " prefill " + std::to_string(tokens)).c_str(), measured, "-", "-",
                  1e3 * tokens / measured);
    }
    if (!quick) {
      std::printf("%-28s %10.2f GB per decode step\n", (name + " weights").c_str(), bytes / 1e9);
    }
    host.stop();
    if (eight_bit) print_accuracy(model, argv[m], name);
    if (quick) continue;
    const RunnerTimes t = runner_times(model);
    std::printf(
        "%-28s step %.3f ms (a buffer per layer), %.3f ms (one buffer); launching %.3f ms\n",
        (name + " runner b=1").c_str(), t.per_layer_ms, t.one_buffer_ms, t.launch_ms);
  }
  return 0;
}
