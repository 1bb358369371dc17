// The LLM engine tests' common ground: the tiny qwen2 test model, seeded prompts, a
// greedy request, the greedy tokens of a prompt run alone (the reference a batched
// request must match), and a fixture that starts an engine on the CPU device.
// Thread-safety: test code; each test owns its fixture.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <vector>

#include "baton/engine/llm/llm_engine.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/make_runner.h"
#include "baton/model/cpu/forward_pass.h"
#include "baton/turn/make_turn.h"
#include "test_data.h"

namespace baton::testing {

inline std::vector<TokenId> prompt_of(int count, int salt) {
  std::vector<TokenId> t;
  for (int i = 0; i < count; ++i) t.push_back((i * 31 + salt * 17) % 250 + 3);
  return t;
}

// Greedy tokens of `prompt` run alone, token by token through a KvCache.
inline std::vector<TokenId> greedy_alone(const LlamaModel& model,
                                         const std::vector<TokenId>& prompt, int count) {
  KvCache cache(model.config(), static_cast<int>(prompt.size()) + count);
  std::vector<float> logits = forward(model, prompt, cache);
  const auto vocab = static_cast<std::ptrdiff_t>(model.config().vocab_size);
  std::vector<TokenId> out;
  while (static_cast<int>(out.size()) < count) {
    const auto last = logits.end() - vocab;
    out.push_back(static_cast<TokenId>(std::max_element(last, logits.end()) - last));
    if (static_cast<int>(out.size()) < count) logits = forward(model, {&out.back(), 1}, cache);
  }
  return out;
}

struct StepShape {
  int rows = 0;
  int sequences = 0;
  bool prefills = false;
  bool batch_invariant = false;
  int invariant_rows = 0;
  std::vector<int> starts;  // each sequence's length before the step
};

// A runner (the CPU's) that records the shape of every step it begins and counts them;
// `pads` > 0 claims ModelRunner::invariant_prefill_rows (the CPU's rows still sum together).
class RecordingRunner final : public ModelRunner {
 public:
  RecordingRunner(std::unique_ptr<ModelRunner> inner, std::vector<StepShape>& steps,
                  std::atomic<int>& count, int pads = 0)
      : inner_(std::move(inner)), steps_(steps), count_(count), pads_(pads) {}
  std::shared_ptr<ModelStep> begin(StepPlan plan, double device_share) override {
    StepShape shape{.sequences = static_cast<int>(plan.sequences.size()),
                    .prefills = plan.prefills,
                    .batch_invariant = plan.batch_invariant,
                    .invariant_rows = plan.invariant_rows};
    for (const SequenceStep& s : plan.sequences) {
      shape.rows += static_cast<int>(s.tokens.size());
      shape.starts.push_back(s.sequence->length);
    }
    steps_.push_back(shape);  // engine thread only; read after the engine stopped
    count_.fetch_add(1);
    return inner_->begin(std::move(plan), device_share);
  }

  int invariant_prefill_rows() const override { return pads_; }

 private:
  std::unique_ptr<ModelRunner> inner_;
  std::vector<StepShape>& steps_;
  std::atomic<int>& count_;
  const int pads_;
};

// What a test engine records of its steps (StepShape each, and their count).
struct StepRecord {
  std::vector<StepShape> steps;
  std::atomic<int> count{0};
};

// An engine named "llm" on `device` whose runner is the CPU's, recorded into `record`.
inline std::unique_ptr<LlmEngine> recording_engine(const LlamaModel& model,
                                                   const LlmBatchOptions& options,
                                                   cpu::CpuDevice& device, GpuTurn& turn,
                                                   StepRecord& record, int pads = 0) {
  const ModelRunnerFactory cpu = cpu_runner_factory();
  const ModelRunnerFactory recording =
      [&record, cpu, pads](const LlamaModel& m, const KvBlockPool& pool, ::baton::Stream& stream) {
        return std::make_unique<RecordingRunner>(cpu(m, pool, stream), record.steps, record.count,
                                                 pads);
      };
  return std::make_unique<LlmEngine>("llm", model, nullptr, options, device.create_stream("llm"),
                                     turn, recording);
}

inline GenerationRequest greedy_request(std::uint64_t id, std::vector<TokenId> prompt,
                                        int max_tokens) {
  GenerationRequest r{.id = id, .prompt = std::move(prompt), .params = {}};
  r.params.sampling.temperature = 0.0;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

class LlmEngineTest : public ::testing::Test {
 protected:
  void start(LlmBatchOptions options, TurnOptions turn_options = {}) {
    turn_ = make_turn(turn_options, device_.default_stream());
    if (turn_options.policy == TurnPolicy::serialize) {
      other_ = turn_->register_client("other", device_.default_stream());
    }
    engine_ =
        std::make_unique<LlmEngine>("llm", model_, nullptr, options, device_.create_stream("llm"),
                                    *turn_, cpu_runner_factory());
  }
  void TearDown() override { engine_.reset(); }

  const LlamaModel model_ = LlamaModel::load(kModels / "qwen2");
  cpu::CpuDevice device_{CommitLimits{}};
  std::unique_ptr<GpuTurn> turn_;
  TurnClientId other_{};
  std::unique_ptr<LlmEngine> engine_;
};

}  // namespace baton::testing
