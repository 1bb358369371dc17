// Embedding engines on real (tiny) models against transformers: the base model's last
// hidden state, pooled by the mean and by the last token, L2-normalised, computed on the
// GPU machine (scripts/make_reference_data.py embeddings) for inputs each run alone;
// here all inputs of a call run batched. And every embedding engine of a host runs on
// the one shared executor thread.
#include "baton/engine/embedding/embedding_engine.h"
#include "baton/host/make_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/engine_host.h"
#include "baton/turn/make_turn.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::kModels;

// f32 on the CPU against f32 in torch, on unit vectors of 64 dims.
constexpr double kTolerance = 2e-5;

nlohmann::json reference(const std::string& model) {
  std::ifstream in(kModels / model / "embeddings.json");
  return nlohmann::json::parse(in);
}

EmbeddingRequest request_of(const nlohmann::json& ref) {
  EmbeddingRequest request{.id = 1, .inputs = {}};
  for (const auto& input : ref["inputs"])
    request.inputs.push_back(input.get<std::vector<TokenId>>());
  return request;
}

class EmbeddingReference : public ::testing::TestWithParam<std::string> {};

TEST_P(EmbeddingReference, MeanAndLastTokenPoolingMatchTransformers) {
  const LlamaModel model = LlamaModel::load(kModels / GetParam());
  const nlohmann::json ref = reference(GetParam());
  cpu::CpuDevice device{CommitLimits{}};
  const auto turn = make_turn(TurnOptions{}, device.default_stream());
  Worker executor("embedding-executor");
  for (const auto& [mode, key] :
       {std::pair{PoolingMode::mean, "mean"}, std::pair{PoolingMode::last_token, "last"}}) {
    EmbeddingEngine engine(std::string("embed-") + key, model,
                           Pooling{.mode = mode, .normalize = true}, executor,
                           device.default_stream(), *turn, cpu_runner_factory());
    const EmbeddingResult result = engine.embed(request_of(ref)).get();
    ASSERT_EQ(result.embeddings.size(), ref[key].size());
    for (std::size_t i = 0; i < result.embeddings.size(); ++i) {
      const auto expected = ref[key][i].get<std::vector<double>>();
      ASSERT_EQ(result.embeddings[i].size(), expected.size());
      double worst = 0.0;
      for (std::size_t d = 0; d < expected.size(); ++d) {
        worst = std::max(worst, std::abs(result.embeddings[i][d] - expected[d]));
      }
      EXPECT_LE(worst, kTolerance) << GetParam() << " " << key << " input " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EmbeddingReference,
                         ::testing::Values(std::string("llama"), std::string("qwen2"),
                                           std::string("qwen3"), std::string("mistral")),
                         [](const ::testing::TestParamInfo<std::string>& model) {
                           return model.param;
                         });

TEST(EmbeddingEngine, BadInputsAreRefusedWithTheReason) {
  const LlamaModel model = LlamaModel::load(kModels / "qwen2");
  cpu::CpuDevice device{CommitLimits{}};
  const auto turn = make_turn(TurnOptions{}, device.default_stream());
  Worker executor("embedding-executor");
  EmbeddingEngine engine("embed", model, Pooling{}, executor, device.default_stream(), *turn,
                         cpu_runner_factory(), KvBlockPool::block_bytes(model.config(), 16) * 2);
  const struct {
    EmbeddingRequest request;
    const char* message;
  } cases[] = {
      {{1, {}}, "no input"},
      {{2, {{1, 2}, {}}}, "input 1 is empty"},
      {{3, {{1, 9999}}}, "outside the vocabulary"},
      {{4, {std::vector<TokenId>(40, 3)}}, "KV blocks"},
  };
  for (const auto& c : cases) {
    try {
      engine.embed(c.request).get();
      ADD_FAILURE() << c.message << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(engine.embed({5, {{1, 2, 3}}}).get().embeddings.size(), 1u);  // still serves
}

TEST(EmbeddingEngine, EveryEmbeddingEngineOfAHostRunsOnTheOneSharedExecutor) {
  const LlamaModel qwen2 = LlamaModel::load(kModels / "qwen2");
  const LlamaModel qwen3 = LlamaModel::load(kModels / "qwen3");
  EngineHost host(std::make_unique<cpu::CpuDevice>(CommitLimits{}), TurnOptions{});
  EmbeddingEngine& a = host.add_embedding_engine("embed-a", qwen2, Pooling{});
  EmbeddingEngine& b =
      host.add_embedding_engine("embed-b", qwen3, Pooling{.mode = PoolingMode::mean});
  EXPECT_EQ(&a.stream(), &host.device().default_stream());
  EXPECT_EQ(&b.stream(), &host.device().default_stream());
  std::vector<std::future<EmbeddingResult>> calls;
  for (std::uint64_t id = 1; id <= 6; ++id) {
    calls.push_back((id % 2 == 0 ? a : b).embed({id, {{1, 2, 3, static_cast<TokenId>(id)}}}));
  }
  std::set<std::thread::id> threads;
  for (auto& call : calls) threads.insert(call.get().executor);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(a.stats().requests_done + b.stats().requests_done, 6u);
}

}  // namespace
}  // namespace baton
