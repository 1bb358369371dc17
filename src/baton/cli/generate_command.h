// The `baton generate` verb: one completion from a Hugging Face model directory on the
// CPU, through the same LLM engine (continuous batching, KV blocks, GPU turn) a server
// runs, with the prompt put in the model's chat template unless --raw.
// Thread-safety: used from main() only.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "baton/engine/llm/llm_batch.h"

namespace baton {

struct GenerateCommand {
  static constexpr int kDefaultMaxTokens = 128;

  std::string model_dir;
  std::string backend = "cpu";
  std::string prompt;
  std::string system;
  std::string chat_template;  // a family name that overrides the model's template
  bool raw = false;
  std::optional<int> max_tokens;  // none: kDefaultMaxTokens, cut to fit the context
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int> top_k;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool json = false;
  std::string weights;  // --weights: bf16, f32 or q8 (weight_matrix.h); "": as stored
  bool widen_bf16 = false;       // --f32: the same as --weights f32
  int threads = 0;
  std::size_t kv_budget_mb = 256;
  int prefill_chunk = LlmBatchOptions{}.prefill_chunk;
  double watchdog_deadline_s = 60.0;

  CLI::App* attach(CLI::App& app);
  int run();
};

}  // namespace baton
