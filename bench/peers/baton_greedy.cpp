// baton_greedy: baton's greedy tokens for a prompt of token ids, through LlmEngine (the path
// bench/llm_cpu_bench.cpp measures), printed as one JSON line, to check that llama.cpp on a
// baton_gguf file (bench/peers/llama_cpp_bench.mjs) computes the same model.
// Usage: baton_greedy MODEL_DIR --prompt-tokens N --generate G [--prompt ID,ID,...]
// Without --prompt the prompt is the benchmarks' one: token i = (i * 7919 + 13) % vocab.
// Prints {"prompt_tokens", "generated", "tokens": [the first token (from the prefill), then
// G decoded ones], "prefill_ms", "decode_ms"}; end tokens do not stop it (ignore_eos).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/llm_engine.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/make_runner.h"
#include "baton/turn/make_turn.h"

namespace {

struct Options {
  std::string model_dir;
  int prompt_tokens = 16;
  int generate = 16;
  std::vector<baton::TokenId> prompt;  // empty: the benchmarks' prompt
};

std::vector<baton::TokenId> parse_ids(std::string_view list) {
  std::vector<baton::TokenId> ids;
  std::size_t start = 0;
  while (start < list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    ids.push_back(static_cast<baton::TokenId>(std::stol(std::string(list.substr(start)))));
    start = comma + 1;
  }
  return ids;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--prompt-tokens" && has_value) {
      o.prompt_tokens = std::atoi(argv[++i]);
    } else if (arg == "--generate" && has_value) {
      o.generate = std::atoi(argv[++i]);
    } else if (arg == "--prompt" && has_value) {
      o.prompt = parse_ids(argv[++i]);
    } else if (o.model_dir.empty()) {
      o.model_dir = arg;
    } else {
      throw std::invalid_argument("unexpected argument " + std::string(arg));
    }
  }
  if (o.model_dir.empty() || o.prompt_tokens < 1 || o.generate < 0) {
    throw std::invalid_argument(
        "usage: baton_greedy MODEL_DIR --prompt-tokens N --generate G [--prompt ID,ID,...]");
  }
  return o;
}

std::vector<baton::TokenId> benchmark_prompt(int count, std::int64_t vocab) {
  std::vector<baton::TokenId> ids;
  for (int i = 0; i < count; ++i) {
    ids.push_back(static_cast<baton::TokenId>((i * std::int64_t{7919} + 13) % vocab));
  }
  return ids;
}

int run(const Options& o) {
  const baton::LlamaModel model = baton::LlamaModel::load(o.model_dir);
  baton::cpu::CpuDevice device{baton::CommitLimits{}};
  const auto turn = baton::make_turn(baton::TurnOptions{}, device.default_stream());
  baton::LlmBatchOptions batch;
  batch.kv_budget_bytes = std::size_t{1} << 30;
  baton::LlmEngine engine("greedy", model, nullptr, batch, device.create_stream("greedy"), *turn,
                          baton::cpu_runner_factory());
  baton::GenerationRequest request{.id = 1, .prompt = o.prompt, .params = {}};
  if (request.prompt.empty()) {
    request.prompt = benchmark_prompt(o.prompt_tokens, model.config().vocab_size);
  }
  request.params.sampling.temperature = 0.0;
  request.params.max_tokens = o.generate + 1;  // the prefill's token, then `generate` steps
  request.params.ignore_eos = true;
  const baton::GenerationResult result = engine.submit(std::move(request)).get();
  std::string tokens;
  for (baton::TokenId t : result.tokens) tokens += (tokens.empty() ? "" : ",") + std::to_string(t);
  std::printf(
      "{\"prompt_tokens\": %d, \"generated\": %d, \"tokens\": [%s], \"prefill_ms\": %.1f, "
      "\"decode_ms\": %.1f}\n",
      result.prompt_tokens, o.generate, tokens.c_str(), result.prefill_ms, result.decode_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton_greedy: %s\n", e.what());
    return 1;
  }
}
