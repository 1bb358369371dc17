// The step's token budget with real threads: while a long prompt is prefilled, every
// running stream still gets a token each step, and no step carries more than the budget
// (the decodes, then prompt chunks in what they leave, a block's worth at least). Without
// a budget the prompt's whole first chunk went into one step and held every stream behind it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "engine/llm_engine_fixture.h"

namespace baton {
namespace {

using testing::greedy_request;
using testing::kModels;
using testing::prompt_of;
using testing::StepShape;

// Each decoding stream's tokens, by the step count at which they arrived.
struct StreamTokens {
  std::mutex mu;
  std::vector<int> steps;
};

class StepBudgetTest : public ::testing::Test {
 protected:
  // Runs kStreams short prompts until they all decode, then a long prompt beside them.
  // An engine over the recording CPU runner, with a budget of `step_tokens`.
  std::unique_ptr<LlmEngine> make_engine(int step_tokens) {
    LlmBatchOptions options;
    options.block_tokens = 8;
    options.kv_budget_bytes = std::size_t{4} << 20;
    options.step_tokens = step_tokens;
    return testing::recording_engine(model_, options, device_, *turn_, record_);
  }

  void run(int step_tokens) {
    const std::unique_ptr<LlmEngine> engine_owner = make_engine(step_tokens);
    LlmEngine& engine = *engine_owner;
    std::vector<std::future<GenerationResult>> futures;
    std::atomic<int> decoding{0};
    for (int i = 0; i < kStreams; ++i) {
      GenerationRequest r = greedy_request(i, prompt_of(4, i), kStreamTokens);
      r.on_token = [this, i, &decoding](const TokenDelta&) {
        std::lock_guard lock(streams_[i].mu);
        if (streams_[i].steps.empty()) decoding.fetch_add(1);
        streams_[i].steps.push_back(step_count_.load());
      };
      futures.push_back(engine.submit(std::move(r)));
    }
    while (decoding.load() < kStreams) std::this_thread::yield();
    long_prompt_step_ = step_count_.load();
    futures.push_back(engine.submit(greedy_request(99, prompt_of(kLongPrompt, 7), 1)));
    for (auto& f : futures) f.get();
    engine.stop();
  }

  static constexpr int kStreams = 12;
  static constexpr int kStreamTokens = 48;
  static constexpr int kLongPrompt = 200;
  const LlamaModel model_ = LlamaModel::load(kModels / "qwen2");
  cpu::CpuDevice device_{CommitLimits{}};
  const std::unique_ptr<GpuTurn> turn_ = make_turn(TurnOptions{}, device_.default_stream());
  testing::StepRecord record_;
  std::vector<StepShape>& steps_ = record_.steps;
  std::atomic<int>& step_count_ = record_.count;
  StreamTokens streams_[kStreams];
  int long_prompt_step_ = 0;
};

TEST_F(StepBudgetTest, EveryStreamGetsATokenEachStepAndNoStepExceedsTheBudget) {
  constexpr int kBudget = 24;
  run(kBudget);
  // Once the streams decode, a step carries the budget, or its decodes and one block (8) of
  // prompt when they fill it.
  for (std::size_t i = static_cast<std::size_t>(long_prompt_step_); i < steps_.size(); ++i) {
    EXPECT_LE(steps_[i].rows, std::max(kBudget, steps_[i].sequences - 1 + 8)) << "step " << i;
  }
  // The long prompt took several steps (200 tokens, 12 a step beside 12 decodes)...
  const auto prefill_steps = std::count_if(steps_.begin() + long_prompt_step_, steps_.end(),
                                           [](const StepShape& s) { return s.rows > kStreams; });
  EXPECT_GE(prefill_steps, kLongPrompt / kBudget) << "of " << steps_.size() << " steps";
  // ...and no stream skipped a step meanwhile: each token came one step after the last.
  for (int i = 0; i < kStreams; ++i) {
    const std::vector<int>& at = streams_[i].steps;
    ASSERT_EQ(at.size(), static_cast<std::size_t>(kStreamTokens)) << "stream " << i;
    for (std::size_t t = 1; t < at.size(); ++t) {
      ASSERT_EQ(at[t] - at[t - 1], 1) << "stream " << i << " token " << t;
    }
  }
}

// With no stream decoding, nobody waits for the step: a prompt goes at the chunk's size
// (256), not the budget's.
TEST_F(StepBudgetTest, APromptWithNoStreamDecodingIsNotHeldToTheBudget) {
  const std::unique_ptr<LlmEngine> engine = make_engine(24);
  engine->submit(greedy_request(1, prompt_of(kLongPrompt, 7), 1)).get();
  engine->stop();
  ASSERT_FALSE(steps_.empty());
  EXPECT_EQ(steps_.front().rows, kLongPrompt);
}

// The old schedule, for contrast: no budget puts the prompt's first 200 tokens in one step.
TEST_F(StepBudgetTest, WithoutABudgetOneStepCarriesTheWholePrompt) {
  run(0);
  const auto largest =
      std::max_element(steps_.begin(), steps_.end(),
                       [](const StepShape& a, const StepShape& b) { return a.rows < b.rows; });
  ASSERT_NE(largest, steps_.end());
  EXPECT_GE(largest->rows, kLongPrompt);
}

}  // namespace
}  // namespace baton
