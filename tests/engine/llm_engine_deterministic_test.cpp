// LlmBatchOptions::deterministic (`--deterministic`) with real threads on the CPU runner:
// a prompt chunk runs alone in its step at prefill_chunk (packed with others' at a fixed
// row count for a runner that pads such steps), decodes still run together and
// ask for batch-invariant rows, no prompt reuses another's cached blocks, and each request
// gets the tokens it gets alone. (That the CUDA runner's invariant rows are bit for bit
// the same is tests/model/cuda/batch_invariance_test.cpp, on the GPU.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <utility>
#include <vector>

#include "engine/llm_engine_fixture.h"

namespace baton {
namespace llm_engine_deterministic_test {
namespace {

using testing::greedy_alone;
using testing::greedy_request;
using testing::kModels;
using testing::prompt_of;
using testing::StepShape;

constexpr int kChunk = 16;
constexpr int kTokens = 12;

class DeterministicTest : public ::testing::Test {
 protected:
  std::unique_ptr<LlmEngine> make_engine(bool deterministic, int pads = 0) {
    LlmBatchOptions options;
    options.block_tokens = 8;
    options.kv_budget_bytes = std::size_t{4} << 20;
    options.prefill_chunk = kChunk;
    options.deterministic = deterministic;
    return testing::recording_engine(model_, options, device_, *turn_, record_, pads);
  }

  const LlamaModel model_ = LlamaModel::load(kModels / "qwen2");
  cpu::CpuDevice device_{CommitLimits{}};
  // Serialize: a test can hold the engine's first step back by holding the turn.
  const std::unique_ptr<GpuTurn> turn_ =
      make_turn(TurnOptions{.policy = TurnPolicy::serialize}, device_.default_stream());
  testing::StepRecord record_;
  std::vector<StepShape>& steps_ = record_.steps;
  std::atomic<int>& step_count_ = record_.count;
};

TEST_F(DeterministicTest, PromptChunksRunAloneDecodesTogetherAndEachRequestAsAlone) {
  const std::unique_ptr<LlmEngine> engine = make_engine(true);
  std::vector<std::vector<TokenId>> prompts;
  std::vector<std::future<GenerationResult>> futures;
  for (int i = 0; i < 8; ++i) {
    prompts.push_back(prompt_of(3 + 7 * i, i));  // 3-52 tokens: up to 4 chunks of 16
    futures.push_back(
        engine->submit(greedy_request(static_cast<std::uint64_t>(i), prompts.back(), kTokens)));
  }
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const GenerationResult result = futures[i].get();
    EXPECT_EQ(result.tokens, greedy_alone(model_, prompts[i], kTokens)) << "request " << i;
  }
  engine->stop();
  int batched_decodes = 0;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    const StepShape& step = steps_[s];
    EXPECT_TRUE(step.batch_invariant) << "step " << s;
    if (step.prefills) {
      EXPECT_EQ(step.sequences, 1) << "step " << s << ": a prompt chunk shares its step";
      EXPECT_LE(step.rows, kChunk) << "step " << s;
    } else if (step.sequences > 1) {
      ++batched_decodes;
    }
  }
  EXPECT_GT(batched_decodes, 0) << "decodes still run together";
}

// A runner that pads a batch-invariant prefill step's products to a fixed row count (the
// CUDA runner) gets several prompts' chunks in one step, each the chunk it has alone (from
// a multiple of the step's rows, at most that many), the step's products at
// min(prefill_chunk, the runner's rows); decodes never share a step with them. (The CPU
// runner behind this one does not pad: the tokens are not compared here.)
TEST_F(DeterministicTest, APaddingRunnerGetsPromptsPackedInTheirAloneChunks) {
  const std::unique_ptr<Stream> gate_stream = device_.create_stream("gate");
  const TurnClientId gate = turn_->register_client("gate", *gate_stream);
  for (const auto& [pads, step_rows] : {std::pair{2 * kChunk, kChunk}, {kChunk / 2, kChunk / 2}}) {
    steps_.clear();
    const std::unique_ptr<LlmEngine> engine = make_engine(true, pads);
    std::vector<std::future<GenerationResult>> futures;
    int prompt_rows = 0;
    int alone_chunks = 0;
    // The engine may plan its first step with the first request alone before it waits for
    // the turn; the others wait, and meet.
    turn_->acquire(gate, BurstKind::prefill);
    for (int i = 0; i < 8; ++i) {
      const int length = i == 0 ? 23 : 3 * i - 1;  // 23, then 2-20: chunks of 2-16, tails
      prompt_rows += length;
      alone_chunks += (length + step_rows - 1) / step_rows;
      futures.push_back(engine->submit(
          greedy_request(static_cast<std::uint64_t>(i), prompt_of(length, i), kTokens)));
    }
    turn_->release(gate);
    for (auto& f : futures) EXPECT_EQ(f.get().tokens.size(), static_cast<std::size_t>(kTokens));
    engine->stop();
    int prefill_steps = 0;
    int packed_steps = 0;
    int rows = 0;
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      const StepShape& step = steps_[s];
      EXPECT_TRUE(step.batch_invariant) << "step " << s;
      if (!step.prefills) {
        EXPECT_EQ(step.invariant_rows, 0) << "step " << s;
        continue;
      }
      ++prefill_steps;
      packed_steps += step.sequences > 1 ? 1 : 0;
      rows += step.rows;
      EXPECT_LE(step.rows, step_rows) << "step " << s;
      EXPECT_EQ(step.invariant_rows, step_rows) << "step " << s;
      for (const int start : step.starts) EXPECT_EQ(start % step_rows, 0) << "step " << s;
    }
    EXPECT_EQ(rows, prompt_rows) << "every prompt token once";
    EXPECT_GT(packed_steps, 0) << "runner's rows " << pads;
    EXPECT_LT(prefill_steps, alone_chunks) << "runner's rows " << pads;
  }
}

// The same 40-token prompt twice, one after the other: the second would reuse the first's
// full blocks (4 of 8 tokens; the last token is always computed) and prefill only the
// rest; deterministic, it prefills it all in the same chunks as the first, so that it
// meets the same kernels.
TEST_F(DeterministicTest, NoPromptReusesCachedBlocks) {
  const std::vector<TokenId> prompt = prompt_of(40, 3);
  for (const bool deterministic : {false, true}) {
    steps_.clear();
    step_count_ = 0;
    const std::unique_ptr<LlmEngine> engine = make_engine(deterministic);
    const GenerationResult first = engine->submit(greedy_request(1, prompt, 2)).get();
    const auto first_of_second = static_cast<std::size_t>(step_count_.load());
    const GenerationResult second = engine->submit(greedy_request(2, prompt, 2)).get();
    engine->stop();
    EXPECT_EQ(first.tokens, second.tokens);
    int second_prompt_rows = 0;
    for (std::size_t s = first_of_second; s < steps_.size(); ++s) {
      if (steps_[s].prefills) second_prompt_rows += steps_[s].rows;
    }
    if (deterministic) {
      EXPECT_EQ(second_prompt_rows, 40);
    } else {
      EXPECT_LT(second_prompt_rows, 40) << "without it the cached blocks are reused";
    }
  }
}

}  // namespace
}  // namespace llm_engine_deterministic_test
}  // namespace baton
