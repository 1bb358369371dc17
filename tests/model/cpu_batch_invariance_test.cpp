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
#include "model/batch_against_alone.h"
#include "temp_dir.h"

namespace baton {
namespace cpu_batch_invariance_test {
namespace {

constexpr int kBlockTokens = 8;

// Rows of `batch` sequences decoded together that differ from the same rows alone.
int rows_unlike_alone(const LlamaModel& model, int batch, bool invariant) {
  KvBlockPool pool(model.config(), kBlockTokens, std::size_t{64} << 20);
  CpuModelRunner runner(model, pool);
  testing::PoolSequences sequences(pool, kBlockTokens);
  const auto vocab = static_cast<std::int64_t>(model.config().vocab_size);
  const testing::RunStep run = [&runner](StepPlan plan) {
    const std::shared_ptr<ModelStep> s = runner.begin(std::move(plan), 1.0);
    for (int i = 0; i < s->layers(); ++i) s->run_layer(i);
    s->finish();
    return s->take_output().values;
  };
  const auto prompt = [vocab](int s) {
    std::vector<TokenId> t;
    for (int i = 0; i < 3 + (5 * s) % 23; ++i) {
      t.push_back(static_cast<TokenId>((i * 37 + s * 101 + 7) % vocab));
    }
    return t;
  };
  return testing::batched_against_alone(run, sequences, batch, static_cast<std::size_t>(vocab),
                                        invariant, prompt)
      .rows_unequal;
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
