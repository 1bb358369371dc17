// --weights on the command line: `baton generate --weights q8` loads 8-bit weights and
// says so; a value other than bf16, f32 or q8 is a usage error (exit 2) naming the three,
// for generate, embed, serve and repro alike; fp8 (the GPU's 8-bit weights) without
// --backend cuda is a usage error naming both.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::run_baton;
using testing::TempDir;

class WeightsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto made = run_baton("make-model --arch qwen2 --seed 5 --out " + model_.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  static void expect_usage_error(const std::string& args) {
    const auto r = run_baton(args, 60);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    for (const char* name : {"bf16", "f32", "q8"}) {
      EXPECT_NE(r.output.find(name), std::string::npos) << args << "\n" << r.output;
    }
  }

  TempDir dir_;
  const std::filesystem::path model_ = dir_.path() / "qwen2";
};

TEST_F(WeightsCli, GenerateLoadsQ8WeightsAndSaysSo) {
  const std::string base = "generate --model " + model_.string() +
                           " --prompt hi --max-tokens 8 --ignore-eos --weights q8";
  const auto text = run_baton(base, 120);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("q8 weights"), std::string::npos) << text.output;
  const auto run = run_baton(base + " --json", 120);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json out = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << run.output;
  EXPECT_EQ(out["tokens"].size(), 8u);
}

TEST_F(WeightsCli, AnUnknownFormatIsAUsageErrorNamingTheKnownOnes) {
  const std::string model = model_.string();
  expect_usage_error("generate --model " + model + " --prompt hi --weights q4");
  expect_usage_error("embed --model " + model + " --text hi --weights int8");
  expect_usage_error("serve --model chat=" + model + " --no-ledger --port 0 --weights fp16");
  expect_usage_error("repro --engine decode --duration 0.1 --weights Q8");
  const auto both = run_baton("generate --model " + model + " --prompt hi --f32 --weights q8");
  EXPECT_EQ(both.exit_code, 2) << both.output;  // --f32 is --weights f32: not both
}

TEST_F(WeightsCli, Fp8WithoutTheCudaBackendIsAUsageErrorNamingBoth) {
  const std::string model = model_.string();
  for (const std::string& args :
       {"generate --model " + model + " --prompt hi --weights fp8",
        "serve --model chat=" + model + " --no-ledger --port 0 --weights fp8"}) {
    const auto r = run_baton(args, 60);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("fp8"), std::string::npos) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("cuda"), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
}  // namespace baton
