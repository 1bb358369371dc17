// How far q8 weights move a model from its bf16 self (model/q8_matrix.h).
// Usage: q8_accuracy MODEL_DIR... [--tokens N]   (default 64 generated tokens)
// For each model: greedy-decodes N tokens after a fixed prompt with the weights as loaded
// by default (bf16 in place; an f32 file stays f32), then runs the q8 model on the same
// tokens (teacher forcing) and reports, over the N positions:
//   - top-1 agreement: the fraction where q8's argmax is the reference's greedy token;
//   - mean log-prob gap: mean of log p_ref(token) - log p_q8(token), in nats;
//   - the greedy prefix: how many tokens q8's own greedy decode shares with the reference.
// Every step is a decode step (one row), the path the q8 kernel runs. Prints a table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/model/forward_pass.h"

namespace {

using baton::LlamaModel;
using baton::TokenId;

// The prompt: a fixed sentence where the model has a tokenizer, else fixed token ids.
std::vector<TokenId> prompt_for(const std::filesystem::path& dir, std::int64_t vocab) {
  if (std::filesystem::exists(dir / "tokenizer.json")) {
    const auto tokenizer = baton::BpeTokenizer::from_directory(dir);
    return tokenizer.encode("Once upon a time, in a small village by the sea, there lived");
  }
  std::vector<TokenId> t;
  for (int i = 0; i < 16; ++i) t.push_back(static_cast<TokenId>((i * 7919 + 13) % vocab));
  return t;
}

// log softmax(logits)[token] and the argmax.
struct Step {
  TokenId best = 0;
  double log_p = 0.0;  // of the token asked for
};

Step score(const float* logits, std::size_t vocab, TokenId token) {
  const float* best = std::max_element(logits, logits + vocab);
  double sum = 0.0;
  for (std::size_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - *best));
  return {static_cast<TokenId>(best - logits),
          static_cast<double>(logits[token] - *best) - std::log(sum)};
}

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
    const TokenId next = forced.empty() ? score(last, vocab, 0).best : forced[i];
    tokens.push_back(next);
    if (i + 1 == count) break;
    const std::vector<float> step = baton::forward(model, std::vector<TokenId>{next}, cache);
    rows.insert(rows.end(), step.begin(), step.end());
  }
  return rows;
}

void report(const std::filesystem::path& dir, int count) {
  const LlamaModel reference = LlamaModel::load(dir);
  const LlamaModel q8 = LlamaModel::load(dir, {.weights = baton::WeightFormat::q8});
  const auto vocab = static_cast<std::size_t>(reference.config().vocab_size);
  const std::vector<TokenId> prompt = prompt_for(dir, reference.config().vocab_size);
  std::vector<TokenId> greedy, replayed, own;
  const std::vector<float> ref_logits = run(reference, prompt, count, {}, greedy);
  const std::vector<float> q8_logits = run(q8, prompt, count, greedy, replayed);
  run(q8, prompt, count, {}, own);
  int agree = 0;
  double gap = 0.0;
  for (int i = 0; i < count; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * vocab;
    const Step r = score(ref_logits.data() + at, vocab, greedy[i]);
    const Step q = score(q8_logits.data() + at, vocab, greedy[i]);
    agree += q.best == greedy[i] ? 1 : 0;
    gap += r.log_p - q.log_p;
  }
  const auto prefix =
      std::mismatch(greedy.begin(), greedy.end(), own.begin()).first - greedy.begin();
  std::printf("| %s | %s | %.1fM | %.2f | %.2f | %.1f%% | %.4f | %td / %d |\n",
              dir.filename().string().c_str(),
              std::string(baton::to_string(reference.embedding().format())).c_str(),
              static_cast<double>(reference.weight_count()) / 1e6,
              static_cast<double>(reference.weight_bytes()) / 1e6,
              static_cast<double>(q8.weight_bytes()) / 1e6, 100.0 * agree / count, gap / count,
              prefix, count);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> dirs;
  int count = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tokens" && i + 1 < argc) {
      count = std::max(1, std::atoi(argv[++i]));
    } else {
      dirs.emplace_back(arg);
    }
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: q8_accuracy MODEL_DIR... [--tokens N]\n");
    return 2;
  }
  std::printf("q8 against the default weights, %d greedy tokens (teacher-forced)\n", count);
  std::printf(
      "| model | reference | weights | ref MB | q8 MB | top-1 agreement | mean log-prob "
      "gap (nats) | q8 greedy = reference for |\n|---|---|---|---|---|---|---|---|\n");
  for (const std::filesystem::path& dir : dirs) report(dir, count);
  return 0;
}
