// `baton embed` end to end on a model `baton make-model` wrote: one normalised vector per
// text, each the same batched as alone; pooling from a sentence-transformers export or
// the flag; bad input exits with 2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::run_baton;
using testing::TempDir;

class EmbedCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto made = run_baton("make-model --arch qwen2 --seed 5 --out " + model_.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  nlohmann::json embed(const std::string& args) {
    const auto r = run_baton("embed --json --model " + model_.string() + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  static std::vector<double> vector_of(const nlohmann::json& j, int i) {
    return j["data"][i]["embedding"].get<std::vector<double>>();
  }

  TempDir dir_;
  const std::filesystem::path model_ = dir_.path() / "qwen2";
};

TEST_F(EmbedCli, OneNormalisedVectorPerTextTheSameBatchedAsAlone) {
  const nlohmann::json both = embed("--text 'hello there' --text 'a second, longer text'");
  ASSERT_EQ(both["data"].size(), 2u);
  EXPECT_EQ(both["pooling"], "last");
  EXPECT_EQ(both["normalized"], true);
  EXPECT_GT(both["usage"]["prompt_tokens"].get<int>(), 2);
  for (int i = 0; i < 2; ++i) {
    double squares = 0.0;
    for (const double x : vector_of(both, i)) squares += x * x;
    EXPECT_NEAR(std::sqrt(squares), 1.0, 1e-5);
  }
  const nlohmann::json alone = embed("--text 'a second, longer text'");
  const std::vector<double> a = vector_of(alone, 0), b = vector_of(both, 1);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t d = 0; d < a.size(); ++d) EXPECT_NEAR(a[d], b[d], 1e-5) << d;
  const nlohmann::json mean = embed("--text 'a second, longer text' --pooling mean");
  EXPECT_EQ(mean["pooling"], "mean");
  EXPECT_NE(vector_of(mean, 0), a);
}

TEST_F(EmbedCli, PoolingComesFromASentenceTransformersExport) {
  std::filesystem::create_directories(model_ / "1_Pooling");
  std::ofstream(model_ / "modules.json")
      << R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
             {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])";
  std::ofstream(model_ / "1_Pooling" / "config.json")
      << R"({"word_embedding_dimension": 64, "pooling_mode_mean_tokens": true})";
  const nlohmann::json j = embed("--text hello");
  EXPECT_EQ(j["pooling"], "mean");
  EXPECT_EQ(j["normalized"], false);
}

TEST_F(EmbedCli, BadInputExitsWith2AndSaysWhy) {
  const auto empty = run_baton("embed --model " + model_.string() + " --text ''");
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("has no tokens"), std::string::npos) << empty.output;
  const auto missing = run_baton("embed --model " + (dir_.path() / "none").string() + " --text a");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  const auto flag = run_baton("embed --model " + model_.string() + " --text a --pooling max");
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  const auto text = run_baton("embed --model " + model_.string() + " --text 'hi there'");
  EXPECT_EQ(text.exit_code, 0) << text.output;
}

}  // namespace
}  // namespace baton
