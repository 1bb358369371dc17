// A base model's export, as sentence-transformers writes published embedding models
// (Qwen3-Embedding, gte-Qwen2): architectures ["*Model"], tensors without the "model."
// prefix, no lm_head. Each reference model is exported so here; its embeddings must match
// transformers' base model (the references of embedding_engine_test), and an export that
// cannot give logits must say so when asked to generate.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "baton/engine/embedding/embedding_engine.h"
#include "baton/engine/llm/llm_engine.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/make_runner.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/turn/make_turn.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::kModels;

namespace fs = std::filesystem;
constexpr double kTolerance = 2e-5;  // as embedding_engine_test: f32 against torch's f32

// Every tensor of `from`'s shards in one model.safetensors under `to`, renamed by `rename`
// (an empty name drops the tensor), with config.json's architectures set to `architecture`.
void export_model(const fs::path& from, const fs::path& to, const std::string& architecture,
                  const std::function<std::string(const std::string&)>& rename) {
  fs::create_directories(to);
  std::map<std::string, testing::Tensor> exported;
  for (const auto& entry : fs::directory_iterator(from)) {
    if (entry.path().extension() != ".safetensors") continue;
    for (auto& [name, tensor] : testing::read_tensors(entry.path())) {
      if (!rename(name).empty()) exported[rename(name)] = std::move(tensor);
    }
  }
  testing::write_tensors(to / "model.safetensors", exported);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(from / "config.json"));
  config["architectures"] = {architecture};
  std::ofstream(to / "config.json") << config.dump(2);
}

// sentence-transformers' layout: no "model." prefix, no lm_head.
std::string base_name(const std::string& name) {
  if (name == "lm_head.weight") return "";
  return name.starts_with("model.") ? name.substr(6) : name;
}

class BaseModelExport : public ::testing::TestWithParam<std::string> {
 protected:
  testing::TempDir dir_;
};

TEST_P(BaseModelExport, GivesTransformersEmbeddings) {
  const fs::path exported = dir_.path() / GetParam();
  export_model(kModels / GetParam(), exported, "BaseModel", base_name);
  const LlamaModel model = LlamaModel::load(exported);
  // Tied embeddings still give logits; an untied export has no lm_head to give them.
  EXPECT_EQ(model.generates_text(), model.config().tie_word_embeddings);
  std::ifstream in(kModels / GetParam() / "embeddings.json");
  const nlohmann::json ref = nlohmann::json::parse(in);
  EmbeddingRequest request{.id = 1, .inputs = {}};
  for (const auto& input : ref["inputs"]) {
    request.inputs.push_back(input.get<std::vector<TokenId>>());
  }
  cpu::CpuDevice device{CommitLimits{}};
  const auto turn = make_turn(TurnOptions{}, device.default_stream());
  Worker executor("embedding-executor");
  EmbeddingEngine engine("embed", model, Pooling{.mode = PoolingMode::mean, .normalize = true},
                         executor, device.default_stream(), *turn, cpu_runner_factory());
  const EmbeddingResult result = engine.embed(request).get();
  ASSERT_EQ(result.embeddings.size(), ref["mean"].size());
  for (std::size_t i = 0; i < result.embeddings.size(); ++i) {
    const auto expected = ref["mean"][i].get<std::vector<double>>();
    ASSERT_EQ(result.embeddings[i].size(), expected.size());
    for (std::size_t d = 0; d < expected.size(); ++d) {
      ASSERT_NEAR(result.embeddings[i][d], expected[d], kTolerance)
          << "input " << i << " dim " << d;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BaseModelExport,
                         ::testing::Values(std::string("llama"), std::string("qwen2"),
                                           std::string("qwen3"), std::string("mistral")),
                         [](const ::testing::TestParamInfo<std::string>& model) {
                           return model.param;
                         });

TEST(BaseModelLayout, AnUntiedExportAskedForTextSaysWhatItIsFor) {
  testing::TempDir dir;
  export_model(kModels / "llama", dir.path(), "LlamaModel", base_name);
  const LlamaModel model = LlamaModel::load(dir.path());
  cpu::CpuDevice device{CommitLimits{}};
  const auto turn = make_turn(TurnOptions{}, device.default_stream());
  try {
    LlmEngine engine("chat", model, nullptr, LlmBatchOptions{}, device.create_stream("chat"), *turn,
                     cpu_runner_factory());
    FAIL() << "an engine without an output matrix";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("no lm_head.weight and tie_word_embeddings is false: "
                                         "a base model's export"),
              std::string::npos)
        << e.what();
  }
}

TEST(BaseModelLayout, NeitherLayoutNamesBoth) {
  testing::TempDir dir;
  export_model(kModels / "qwen2", dir.path(), "Qwen2Model",
               [](const std::string& name) { return "encoder." + name; });
  try {
    LlamaModel::load(dir.path());
    FAIL() << "loaded";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor 'model.embed_tokens.weight' (a "
                                         "*ForCausalLM checkpoint) nor 'embed_tokens.weight'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace baton
