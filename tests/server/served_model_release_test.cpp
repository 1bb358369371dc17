// load_served_model gives a chat model's host copies back once its runner holds the
// weights on a GPU (LlamaModel::release_host_copies), so that a q8 model is not held twice;
// on the CPU, and for an embedding model, it releases nothing. The GPU test (a q8 model
// whose arrays of 2 MiB or more hold 42 MiB) checks host_bytes() and that the model still
// answers; it is skipped where there is no CUDA device.
#include <gtest/gtest.h>

#include <memory>

#include "baton/engine/request.h"
#include "baton/gpu/backend_unavailable.h"
#include "baton/host/make_device.h"
#include "baton/model/writer/model_writer.h"
#include "baton/server/models/served_model.h"
#include "temp_dir.h"

namespace baton {
namespace served_model_release_test {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// A host on `backend`, or null where it is not available (no GPU).
std::unique_ptr<EngineHost> host_on(const std::string& backend) {
  TurnOptions turn;
  turn.policy = TurnPolicy::serialize;
  try {
    return std::make_unique<EngineHost>(make_device(backend), turn);
  } catch (const BackendUnavailable&) {
    return nullptr;
  }
}

// A q8 chat model in `dir`: hidden 1024, MLP 4096, vocabulary 16384, tied, 1 layer.
ModelSpec q8_spec(const std::filesystem::path& dir, ModelSpec::Kind kind) {
  ModelShape shape = model_shape("tiny", ModelArch::llama);
  shape.vocab_size = 16384;
  shape.hidden_size = 1024;
  shape.intermediate_size = 4096;
  shape.num_layers = 1;
  shape.num_heads = 16;
  shape.num_kv_heads = 4;
  shape.head_dim = 64;
  shape.tie_word_embeddings = true;
  write_model(dir, ModelArch::llama, shape, 21);
  ModelSpec spec;
  spec.name = "q8";
  spec.dir = dir;
  spec.kind = kind;
  spec.kv_budget_mb = 16;
  spec.kv_mode = KvBudgetMode::given;
  spec.max_batch = 4;
  spec.weights = WeightFormat::q8;
  return spec;
}

GenerationResult generate(const ServedModel& model, int tokens) {
  GenerationRequest request;
  request.prompt = model.tokenizer->encode("hello there");
  request.params.max_tokens = tokens;
  request.params.ignore_eos = true;
  request.params.sampling.temperature = 0.0;
  return model.llm->submit(std::move(request)).get();
}

TEST(ServedModelRelease, OnTheCpuAChatModelKeepsItsHostCopy) {
  const testing::TempDir dir;
  std::unique_ptr<EngineHost> host = host_on("cpu");
  const std::unique_ptr<ServedModel> served =
      load_served_model(*host, q8_spec(dir.path(), ModelSpec::Kind::chat), 1);
  EXPECT_FALSE(served->model->host_copies_released());
  EXPECT_GE(served->model->host_bytes(), served->model->weight_bytes());
  EXPECT_EQ(generate(*served, 4).tokens.size(), 4u);
}

TEST(ServedModelRelease, OnCudaAQ8ChatModelGivesItsHostCopyBackAndStillAnswers) {
  std::unique_ptr<EngineHost> host = host_on("cuda");
  if (!host) GTEST_SKIP() << "no CUDA device";
  const testing::TempDir dir;
  const std::unique_ptr<ServedModel> served =
      load_served_model(*host, q8_spec(dir.path(), ModelSpec::Kind::chat), 1);
  const LlamaModel& model = *served->model;
  ASSERT_TRUE(model.output().is_q8());
  EXPECT_TRUE(model.host_copies_released());
  // Given back: the embedding's values (16 MiB) and scales (2 MiB), gate, up and down's
  // values (4 MiB each); kept: q, k, v, o and the MLP's scales, under 2 MiB each.
  EXPECT_LE(model.host_bytes() + 29 * kMiB, model.weight_bytes()) << model.host_bytes();
  const GenerationResult first = generate(*served, 12);
  EXPECT_EQ(first.tokens.size(), 12u);
  EXPECT_EQ(generate(*served, 12).tokens, first.tokens);
}

TEST(ServedModelRelease, OnCudaAnEmbeddingModelKeepsItsHostCopy) {
  std::unique_ptr<EngineHost> host = host_on("cuda");
  if (!host) GTEST_SKIP() << "no CUDA device";
  const testing::TempDir dir;
  const std::unique_ptr<ServedModel> served =
      load_served_model(*host, q8_spec(dir.path(), ModelSpec::Kind::embedding), 1);
  EXPECT_FALSE(served->model->host_copies_released());
}

}  // namespace
}  // namespace served_model_release_test
}  // namespace baton
