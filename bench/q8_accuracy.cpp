// How far quantized weights move a model from its bf16 self.
// Usage: q8_accuracy MODEL_DIR... [--tokens N]   (default 64 generated tokens)
//        q8_accuracy REFERENCE --variant PATH... [--tokens N]
// The first form: each model against itself quantized to q8 at load (model/q8_matrix.h),
// then against itself in fp8 as a GPU holds it (`--weights fp8`), emulated on the CPU
// (e4m3_rounding.h: the device sums exact products of bf16 activations and E4M3 codes in
// f32 and scales the sum; the CPU multiplies by code x scale in f32: the same rounding of
// the weights, the sums' order aside).
// The second: the reference (a bf16 model folder) against files quantized from it by other
// tools (GGUF from llama.cpp's quantizer, MLX's affine format: bench/peers), each loaded
// as stored; the reference itself at q8 is the first variant.
// Greedy-decodes N tokens after a fixed prompt with the reference's weights as loaded by
// default, then runs each variant on the same tokens (teacher forcing), and reports, over
// the N positions:
//   - top-1 agreement: the fraction where the variant's argmax is the reference's token;
//   - mean log-prob gap: mean of log p_ref(token) - log p_variant(token), in nats;
//   - the greedy prefix: how many tokens its own greedy decode shares with the reference;
//   - the second form also its decode rate (after a warm-up, the best of 5 greedy runs of N
//     batch-1 steps).
// Every step is a decode step (one row), the path the q8 kernel runs. Prints a table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "baton/model/cpu/forward_pass.h"
#include "logit_agreement.h"

namespace {

using baton::LlamaModel;
using baton::TokenId;

// Runs `prompt` then, one decode step at a time, either the model's own greedy tokens
// (forced empty) or `forced`; returns the logits of the last prompt position and of each
// step, [count x vocab].
std::vector<float> run(const LlamaModel& model, const std::vector<TokenId>& prompt, int count,
                       const std::vector<TokenId>& forced, std::vector<TokenId>& tokens) {
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  baton::KvCache cache(model.config(), static_cast<int>(prompt.size()) + count);
  std::vector<float> logits = baton::forward(model, prompt, cache);
  std::vector<float> rows(logits.end() - static_cast<std::ptrdiff_t>(vocab), logits.end());
  tokens.clear();
  for (int i = 0; i < count; ++i) {
    const float* last = rows.data() + static_cast<std::size_t>(i) * vocab;
    const TokenId next = forced.empty() ? baton::bench::score(last, vocab, 0).best : forced[i];
    tokens.push_back(next);
    if (i + 1 == count) break;
    const std::vector<float> step = baton::forward(model, std::vector<TokenId>{next}, cache);
    rows.insert(rows.end(), step.begin(), step.end());
  }
  return rows;
}

struct Compared {
  double agreement = 0.0;  // fraction
  double gap = 0.0;        // nats, mean
  std::ptrdiff_t prefix = 0;
  double tokens_per_s = 0.0;
};

// `model` against the reference's greedy tokens and their logits.
Compared compare(const LlamaModel& model, const std::vector<TokenId>& prompt,
                 const std::vector<TokenId>& greedy, const std::vector<float>& ref_logits,
                 bool timed) {
  const int count = static_cast<int>(greedy.size());
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  std::vector<TokenId> replayed, own;
  const std::vector<float> logits = run(model, prompt, count, greedy, replayed);
  Compared c;
  double best_s = 1e30;
  for (int i = 0; i < (timed ? 6 : 1); ++i) {  // timed: a warm-up, then the best of 5
    const auto start = std::chrono::steady_clock::now();
    run(model, prompt, count, {}, own);
    if (i > 0 || !timed)
      best_s = std::min(
          best_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  c.tokens_per_s = count / best_s;
  const baton::bench::Agreement a = baton::bench::agreement(ref_logits, logits, greedy, vocab);
  c.agreement = a.top1;
  c.gap = a.gap;
  c.prefix = baton::bench::common_prefix(greedy, own);
  return c;
}

// The reference: a model as stored, its greedy tokens after the fixed prompt, their logits.
struct Reference {
  Reference(const std::filesystem::path& dir, int count)
      : model(LlamaModel::load(dir)),
        prompt(baton::bench::prompt_for(dir, model.config().vocab_size)),
        logits(run(model, prompt, count, {}, greedy)) {}
  LlamaModel model;
  std::vector<TokenId> prompt;
  std::vector<TokenId> greedy;  // filled by logits' initialiser, declared before it
  std::vector<float> logits;
};

Compared against(const Reference& reference, const LlamaModel& model, bool timed) {
  return compare(model, reference.prompt, reference.greedy, reference.logits, timed);
}

void report(const Reference& reference, const std::filesystem::path& dir, int count) {
  const LlamaModel q8 = LlamaModel::load(dir, {.weights = baton::WeightFormat::q8});
  const Compared c = against(reference, q8, false);
  std::printf("| %s | %s | %.1fM | %.2f | %.2f | %.1f%% | %.4f | %td / %d |\n",
              dir.filename().string().c_str(),
              std::string(baton::to_string(reference.model.embedding().format())).c_str(),
              static_cast<double>(reference.model.weight_count()) / 1e6,
              static_cast<double>(reference.model.weight_bytes()) / 1e6,
              static_cast<double>(q8.weight_bytes()) / 1e6, 100.0 * c.agreement, c.gap, c.prefix,
              count);
}

// fp8 as a GPU holds it (`--weights fp8`: E4M3 at each row's scale, all but the
// embedding; `group` 0), or at a scale per `group` weights of a row, emulated on the CPU:
// f32 weights rounded so (e4m3_rounding.h). The table's row, to print after q8's table.
std::string fp8_row(const Reference& reference, const std::filesystem::path& dir, int count,
                    int group) {
  const LlamaModel fp8 = LlamaModel::load(dir, {.emulate_fp8 = true, .emulate_fp8_group = group});
  const Compared c = against(reference, fp8, false);
  char text[512];
  std::snprintf(text, sizeof text, "| %s | %s | %s | %.1f%% | %.4f | %td / %d |\n",
                dir.filename().string().c_str(),
                std::string(baton::to_string(reference.model.embedding().format())).c_str(),
                group == 0 ? "a row (the GPU's)" : std::to_string(group).c_str(),
                100.0 * c.agreement, c.gap, c.prefix, count);
  return text;
}

void report_variants(const std::filesystem::path& dir, const std::vector<std::string>& variants,
                     int count) {
  const Reference reference(dir, count);
  const auto row = [&](const std::string& name, const LlamaModel& model) {
    const Compared c = against(reference, model, true);
    std::printf("| %s | %s | %.2f | %.1f%% | %.4f | %td / %d | %.0f |\n", name.c_str(),
                std::string(baton::to_string(model.layers()[0].up.format())).c_str(),
                static_cast<double>(model.weight_bytes()) / 1e6, 100.0 * c.agreement, c.gap,
                c.prefix, count, c.tokens_per_s);
  };
  row(dir.filename().string() + " (the reference)", reference.model);
  row("--weights q8", LlamaModel::load(dir, {.weights = baton::WeightFormat::q8}));
  row("--weights fp8 (a GPU's E4M3, emulated)", LlamaModel::load(dir, {.emulate_fp8 = true}));
  for (const std::string& variant : variants) {
    row(std::filesystem::path(variant).filename().string(), LlamaModel::load(variant));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> dirs;
  std::vector<std::string> variants;
  int count = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tokens" && i + 1 < argc) {
      count = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--variant" && i + 1 < argc) {
      variants.emplace_back(argv[++i]);
    } else {
      dirs.emplace_back(arg);
    }
  }
  if (dirs.empty() || (!variants.empty() && dirs.size() != 1)) {
    std::fprintf(stderr,
                 "usage: q8_accuracy MODEL_DIR... [--tokens N]\n"
                 "       q8_accuracy REFERENCE --variant PATH... [--tokens N]\n");
    return 2;
  }
  if (!variants.empty()) {
    std::printf("Against %s as stored, %d greedy tokens (teacher-forced), batch-1 decode\n",
                dirs[0].string().c_str(), count);
    std::printf(
        "| variant | held as | MB held | top-1 agreement | mean log-prob gap (nats) | "
        "greedy = reference for | decode tokens/s |\n|---|---|---|---|---|---|---|\n");
    report_variants(dirs[0], variants, count);
    return 0;
  }
  std::printf("q8 against the default weights, %d greedy tokens (teacher-forced)\n", count);
  std::printf(
      "| model | reference | weights | ref MB | q8 MB | top-1 agreement | mean log-prob "
      "gap (nats) | q8 greedy = reference for |\n|---|---|---|---|---|---|---|---|\n");
  std::string fp8_rows;  // each reference run once for both tables
  for (const std::filesystem::path& dir : dirs) {
    const Reference reference(dir, count);
    report(reference, dir, count);
    for (const int group : {0, 128, 32}) fp8_rows += fp8_row(reference, dir, count, group);
  }
  std::printf(
      "\nfp8 (E4M3 at each row's scale, as `--weights fp8` holds on a GPU, or at a scale per "
      "group of a row's weights; emulated on the CPU) against the default weights, %d "
      "greedy tokens (teacher-forced)\n",
      count);
  std::printf(
      "| model | reference | weights a scale | top-1 agreement | mean log-prob gap (nats) | "
      "fp8 greedy = reference for |\n|---|---|---|---|---|---|\n");
  std::fputs(fp8_rows.c_str(), stdout);
  return 0;
}
