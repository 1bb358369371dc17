// `baton make-model` end to end through the command line: a model directory that baton's
// readers load, exit code 2 for bad flags, and no writing into a non-empty directory
// without --force.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "baton/model/bpe_tokenizer.h"
#include "baton/model/model_config.h"
#include "cli_util.h"
#include "model/safetensors_writer.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::run_baton;
using testing::TempDir;

TEST(MakeModelCli, WritesALoadableModelAndSaysWhat) {
  TempDir dir;
  const fs::path out = dir.path() / "tiny-qwen3";
  const auto r = run_baton("make-model --arch qwen3 --out " + out.string() +
                           " --hidden 32 --heads 2 --kv-heads 1 --layers 1 --dtype f32 --seed 9");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model.safetensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parameters: "), std::string::npos) << r.output;
  const ModelConfig config = read_model_config(out);
  EXPECT_EQ(config.arch, ModelArch::qwen3);
  EXPECT_EQ(config.hidden_size, 32);
  EXPECT_EQ(config.head_dim, 16);
  EXPECT_EQ(config.num_layers, 1);
  EXPECT_EQ(config.dtype, "float32");
  EXPECT_NO_THROW(BpeTokenizer::from_directory(out));
}

TEST(MakeModelCli, BadFlagsExitWithTwo) {
  TempDir dir;
  const std::string out = " --out " + (dir.path() / "m").string();
  for (const std::string& args : {"--arch gpt9" + out, "--arch qwen2 --dtype f8" + out,
                                  "--arch qwen2 --shape huge" + out, "--arch llama --heads 3" + out,
                                  "--arch llama --vocab 100" + out, std::string("--arch llama")}) {
    const auto r = run_baton("make-model " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "m"));
}

TEST(MakeModelCli, ANonEmptyDirectoryNeedsForce) {
  TempDir dir;
  std::ofstream(dir.path() / "notes.txt") << "mine";
  const std::string args = "make-model --arch llama --out " + dir.path().string();
  const auto refused = run_baton(args);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_FALSE(fs::exists(dir.path() / "config.json"));
  const auto forced = run_baton(args + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(read_model_config(dir.path()).arch, ModelArch::llama);
  EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
}

}  // namespace
}  // namespace baton
