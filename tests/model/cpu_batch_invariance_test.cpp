// Does a row's answer on the CPU runner depend on the rest of its batch? `--deterministic`
// promises the same tokens whatever else runs. Each of up to 12 sequences is prefilled
// alone twice, into two copies; one copy decodes a step in a batch, the other alone. With
// StepPlan::batch_invariant the two logits rows must be equal bit for bit, for bf16 and
// q8 weights. Without it, bf16 rows differed on this 2-core AMD EPYC machine (2026-12-07: 2 of
// 2, 3 of 3, ... rows; several rows' dot products sum in another order than one row's),
// which is why the runner runs an invariant step's rows one at a time.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "baton/model/cpu/cpu_model_runner.h"
#include "baton/model/writer/model_writer.h"
#include "temp_dir.h"

namespace baton {
namespace cpu_batch_invariance_test {
namespace {

constexpr int kBlockTokens = 8;

class CpuRunner {
 public:
  explicit CpuRunner(const LlamaModel& model)
      : pool_(model.config(), kBlockTokens, std::size_t{64} << 20), runner_(model, pool_) {}

  KvSequence& add_sequence(int capacity) {
    auto s = std::make_unique<KvSequence>();
    for (int b = 0; b < (capacity + kBlockTokens - 1) / kBlockTokens; ++b) {
      s->blocks.push_back(*pool_.allocate());
    }
    sequences_.push_back(std::move(s));
    return *sequences_.back();
  }

  std::vector<float> step(const std::vector<KvSequence*>& which,
                          const std::vector<std::vector<TokenId>>& tokens, bool invariant) {
    StepPlan plan{.output = StepOutput::last_logits, .batch_invariant = invariant};
    for (std::size_t i = 0; i < which.size(); ++i) {
      plan.sequences.push_back({tokens[i], which[i]});
      plan.prefills = plan.prefills || tokens[i].size() > 1;
    }
    const std::shared_ptr<ModelStep> s = runner_.begin(std::move(plan), 1.0);
    for (int i = 0; i < s->layers(); ++i) s->run_layer(i);
    s->finish();
    return s->take_output().values;
  }

 private:
  KvBlockPool pool_;
  CpuModelRunner runner_;
  std::vector<std::unique_ptr<KvSequence>> sequences_;
};

std::vector<TokenId> prompt(int s, std::int64_t vocab) {
  std::vector<TokenId> t;
  for (int i = 0; i < 3 + (5 * s) % 23; ++i) {
    t.push_back(static_cast<TokenId>((i * 37 + s * 101 + 7) % vocab));
  }
  return t;
}

// Rows of `batch` sequences decoded together that differ from the same rows alone.
int rows_unlike_alone(const LlamaModel& model, int batch, bool invariant) {
  CpuRunner runner(model);
  const auto vocab = static_cast<std::size_t>(model.config().vocab_size);
  std::vector<KvSequence*> together, alone;
  std::vector<std::vector<TokenId>> next;
  for (int s = 0; s < batch; ++s) {
    for (std::vector<KvSequence*>* copy : {&together, &alone}) {
      KvSequence& sequence = runner.add_sequence(64);
      runner.step({&sequence}, {prompt(s, static_cast<std::int64_t>(vocab))}, invariant);
      copy->push_back(&sequence);
    }
    next.push_back({static_cast<TokenId>((s * 13 + 1) % static_cast<int>(vocab))});
  }
  const std::vector<float> batched = runner.step(together, next, invariant);
  int unlike = 0;
  for (int s = 0; s < batch; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const std::vector<float> single = runner.step({alone[i]}, {next[i]}, invariant);
    const std::vector<float> row(batched.begin() + static_cast<std::ptrdiff_t>(i * vocab),
                                 batched.begin() + static_cast<std::ptrdiff_t>((i + 1) * vocab));
    unlike += row == single ? 0 : 1;
  }
  return unlike;
}

class CpuBatchInvariance : public ::testing::TestWithParam<WeightFormat> {};

LlamaModel small_llama(const std::filesystem::path& dir, WeightFormat weights) {
  ModelShape shape;
  shape.vocab_size = 1024;
  shape.hidden_size = 128;
  shape.num_heads = 4;
  shape.num_kv_heads = 2;
  shape.head_dim = 32;
  shape.intermediate_size = 256;
  shape.num_layers = 2;
  write_model(dir, ModelArch::llama, shape, 5);
  return LlamaModel::load(dir, ModelLoadOptions{.weights = weights});
}

TEST_P(CpuBatchInvariance, AnInvariantDecodeRowGetsTheLogitsItGetsAlone) {
  ::baton::testing::TempDir dir;
  const LlamaModel model = small_llama(dir.path(), GetParam());
  for (const int batch : {2, 3, 8, 12}) {
    EXPECT_EQ(rows_unlike_alone(model, batch, true), 0) << "batch " << batch;
  }
}

INSTANTIATE_TEST_SUITE_P(Weights, CpuBatchInvariance,
                         ::testing::Values(WeightFormat::bf16, WeightFormat::q8),
                         [](const auto& param_info) {
                           return std::string(to_string(param_info.param));
                         });

}  // namespace
}  // namespace cpu_batch_invariance_test
}  // namespace baton
