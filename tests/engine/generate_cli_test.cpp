// `baton generate` end to end: a model `baton make-model` wrote, through the chat template
// and the LLM engine. Greedy output is reproducible and matches --raw with the template
// applied by hand; a stop string cuts the text; bad directories and flags exit with 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::run_baton;
using testing::TempDir;

class GenerateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto made = run_baton("make-model --arch llama --seed 4 --out " + model_.string());
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  nlohmann::json generate(const std::string& args) {
    const auto r = run_baton("generate --json --model " + model_.string() + " " + args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }

  TempDir dir_;
  const std::filesystem::path model_ = dir_.path() / "llama";
};

TEST_F(GenerateCli, GreedyIsReproducibleAndTheTemplateIsTheModels) {
  const nlohmann::json first = generate("--prompt 'Hello, world' --max-tokens 12 --ignore-eos");
  ASSERT_FALSE(first.is_discarded());
  EXPECT_EQ(first["chat_template"], "jinja");  // the model's own, run as Jinja
  EXPECT_EQ(first["tokens"].size(), 12u);
  EXPECT_EQ(first["logprobs"].size(), 12u);
  EXPECT_EQ(first["finish_reason"], "length");
  EXPECT_EQ(generate("--prompt 'Hello, world' --max-tokens 12 --ignore-eos")["tokens"],
            first["tokens"]);
  // The same text rendered by hand and sent raw (newlines inside the shell's quotes).
  const std::string rendered =
      "'<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello, "
      "world<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n'";
  const nlohmann::json raw =
      generate("--raw --prompt " + rendered + " --max-tokens 12 --ignore-eos");
  EXPECT_EQ(raw["tokens"], first["tokens"]);
  EXPECT_EQ(raw["usage"]["prompt_tokens"], first["usage"]["prompt_tokens"]);
}

TEST_F(GenerateCli, AStopStringCutsTheText) {
  const nlohmann::json all = generate("--prompt hi --max-tokens 32 --ignore-eos");
  const std::string text = all["text"];
  // A letter from the second half of the text (random weights: any text at all).
  const auto letter =
      std::find_if(text.begin() + static_cast<std::ptrdiff_t>(text.size() / 2), text.end(),
                   [](char c) { return std::isalpha(c & 0x7f) && c > 0; });
  ASSERT_NE(letter, text.end()) << text;
  const std::string stop(1, *letter);
  const nlohmann::json cut = generate("--prompt hi --max-tokens 32 --ignore-eos --stop " + stop);
  EXPECT_EQ(cut["finish_reason"], "stop");
  EXPECT_EQ(cut["text"], text.substr(0, text.find(stop)));
}

// --seed and --top-k reach the sampler's own fields (they once landed in the penalties by
// position: --seed 1 became frequency_penalty 1, --seed 3 and --top-k 40 were refused).
TEST_F(GenerateCli, SeedAndTopKReachTheSampler) {
  const std::string sampled = "--prompt hi --max-tokens 16 --ignore-eos --temperature 1 ";
  const nlohmann::json seed3 = generate(sampled + "--seed 3");
  ASSERT_FALSE(seed3.is_discarded());
  EXPECT_EQ(seed3["tokens"].size(), 16u);
  // The same seed at temperature 1: the same text, run after run.
  EXPECT_EQ(generate(sampled + "--seed 3")["text"], seed3["text"]);
  const nlohmann::json seed1 = generate(sampled + "--seed 1");
  EXPECT_EQ(generate(sampled + "--seed 1")["tokens"], seed1["tokens"]);
  EXPECT_NE(seed1["tokens"], seed3["tokens"]);  // 16 draws of a random model's tokens
  // top-k 1 at temperature 1 leaves only the most likely token: the greedy text.
  const nlohmann::json greedy = generate("--prompt hi --max-tokens 16 --ignore-eos --temperature 0");
  EXPECT_EQ(generate(sampled + "--top-k 1 --seed 7")["tokens"], greedy["tokens"]);
  const nlohmann::json top40 = generate(sampled + "--top-k 40 --seed 3");
  EXPECT_EQ(top40["tokens"].size(), 16u);
  EXPECT_EQ(generate(sampled + "--top-k 40 --seed 3")["tokens"], top40["tokens"]);
}

TEST_F(GenerateCli, BadDirectoriesAndFlagsExitWithTwo) {
  const auto missing =
      run_baton("generate --model " + (dir_.path() / "none").string() + " --prompt hi");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("config.json"), std::string::npos) << missing.output;
  std::filesystem::remove(model_ / "tokenizer.json");
  const auto no_tokenizer = run_baton("generate --model " + model_.string() + " --prompt hi");
  EXPECT_EQ(no_tokenizer.exit_code, 2) << no_tokenizer.output;
  EXPECT_NE(no_tokenizer.output.find("tokenizer.json"), std::string::npos) << no_tokenizer.output;
  const auto bad_template =
      run_baton("generate --model " + model_.string() + " --prompt hi --chat-template jinja9");
  EXPECT_EQ(bad_template.exit_code, 2) << bad_template.output;
  const auto bad_flag = run_baton("generate --model " + model_.string() + " --prompt hi --top-p 2");
  EXPECT_EQ(bad_flag.exit_code, 2) << bad_flag.output;
}

TEST_F(GenerateCli, SaysHowLongTheLoadTookAndNeverReportsADecodeOfNoSteps) {
  const auto one = run_baton("generate --model " + model_.string() + " --prompt hi --max-tokens 1");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("loaded " + model_.string() + " (llama, bf16 weights, "),
            std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("1 tokens, no decode step"), std::string::npos) << one.output;
  EXPECT_EQ(one.output.find("0 tokens/s"), std::string::npos) << one.output;
  const nlohmann::json timings = generate("--prompt hi --max-tokens 1")["timings"];
  EXPECT_TRUE(timings["decode_tokens_per_s"].is_null());
  EXPECT_GT(timings["load_ms"].get<double>(), 0.0);
  EXPECT_GT(generate("--prompt hi --max-tokens 3 --ignore-eos")["timings"]["decode_tokens_per_s"]
                .get<double>(),
            0.0);
}

// Overwrites the bytes of tensor `name` in DIR/model.safetensors with 0xff: NaN in f32,
// bf16 and f16 alike.
void poison_tensor(const std::filesystem::path& file, const std::string& name) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  std::uint64_t length = 0;
  f.read(reinterpret_cast<char*>(&length), sizeof length);
  std::string header(length, '\0');
  f.read(header.data(), static_cast<std::streamsize>(length));
  const auto offsets = nlohmann::json::parse(header).at(name).at("data_offsets");
  const std::uint64_t begin = offsets[0], end = offsets[1];
  f.seekp(static_cast<std::streamoff>(8 + length + begin));
  const std::string nan(end - begin, '\xff');
  f.write(nan.data(), static_cast<std::streamsize>(nan.size()));
}

TEST_F(GenerateCli, AnExplicitMaxTokensThatDoesNotFitIsReportedAsGiven) {
  // Letters in no pattern that the tokenizer's merges could shorten much: well past the
  // model's 2048 positions.
  std::string prompt;
  std::uint32_t state = 7;
  for (int i = 0; i < 12000; ++i) {
    state = state * 1664525u + 1013904223u;
    prompt += static_cast<char>('a' + (state >> 24) % 26);
  }
  const auto r = run_baton("generate --raw --model " + model_.string() + " --prompt " + prompt +
                           " --max-tokens 5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("in the prompt, 5 in the completion"), std::string::npos) << r.output;
}

// Refused at load now, naming the file and the tensor (nonfinite_weights_test.cpp), where
// before the first step found a non-finite logit.
TEST_F(GenerateCli, NonFiniteWeightsAreAnErrorNamingTheModel) {
  poison_tensor(model_ / "model.safetensors", "model.norm.weight");
  const auto r = run_baton("generate --model " + model_.string() + " --prompt hi --max-tokens 4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(model_.string() +
                          "/model.safetensors: tensor 'model.norm.weight' holds an infinity or a NaN"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace baton
