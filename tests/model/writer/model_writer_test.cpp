// Made-up models (model_writer.h, tokenizer_writer.h): each arch's tiny model loads with
// baton's own readers and runs, its tokenizer round-trips any text, the bytes depend on
// the seed alone, and bad shapes are refused before anything is written.
#include "baton/model/writer/model_writer.h"
#include "baton/model/config/config_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "baton/common/read_file.h"
#include "baton/model/cpu/forward_pass.h"
#include "baton/model/llama_model.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/model/writer/tokenizer_writer.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::read_json;

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;
using namespace std::string_literals;

ModelShape tiny(ModelArch arch) { return model_shape("tiny", arch); }

class EachArch : public ::testing::TestWithParam<const char*> {
 protected:
  ModelArch arch() const { return writable_arch(GetParam()); }
};

TEST_P(EachArch, TheTinyModelLoadsAndGivesFiniteVariedLogits) {
  TempDir dir;
  const WrittenModel written = write_model(dir.path() / "m", arch(), tiny(arch()), 7);
  EXPECT_EQ(written.parameters, parameter_count(arch(), tiny(arch())));
  const LlamaModel model = LlamaModel::load(dir.path() / "m");
  EXPECT_EQ(model.config().arch, arch());
  EXPECT_EQ(model.config().vocab_size, 1024);
  EXPECT_EQ(model.config().tie_word_embeddings, arch() != ModelArch::llama);
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(dir.path() / "m");
  EXPECT_EQ(static_cast<std::int64_t>(tokenizer.vocab_size()), written.tokenizer_size);

  const std::vector<TokenId> prompt = tokenizer.encode("The harbour town woke slowly.");
  KvCache cache(model.config(), 64);
  const std::vector<float> logits = forward(model, prompt, cache);
  ASSERT_EQ(logits.size(), prompt.size() * 1024);
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
  const auto [low, high] = std::minmax_element(logits.end() - 1024, logits.end());
  EXPECT_GT(*high - *low, 0.1f) << "the last position's logits are nearly flat";
}

TEST_P(EachArch, TheTokenizerRoundTripsAnyTextAndKnowsItsSpecialTokens) {
  const MadeTokenizer made = make_tokenizer(arch());
  const BpeTokenizer tokenizer(made.tokenizer_json, "tokenizer.json");
  EXPECT_EQ(static_cast<std::int64_t>(tokenizer.vocab_size()), made.size);
  EXPECT_GE(made.merge_count, 200);
  const std::string texts[] = {
      "Hello, world! It's 2024: (a + b) * c;\n\tindented\r\nlines  ",
      "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82 \xd0\xbf\xd1\x80\xd0\xb8",
      "\xff\xfe\x80 bytes that are not UTF-8 \0 nul"s,
      "",
  };
  for (const std::string& text : texts) EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text);

  ASSERT_EQ(made.special_tokens.size(), made.special_ids.size());
  for (std::size_t i = 0; i < made.special_ids.size(); ++i) {
    const TokenId id = made.special_ids[i];
    EXPECT_EQ(tokenizer.token_id(made.special_tokens[i]), id);
    EXPECT_TRUE(tokenizer.is_special(id));
    EXPECT_EQ(tokenizer.encode(made.special_tokens[i]), std::vector<TokenId>{id});
    EXPECT_EQ(id, made.size - static_cast<std::int64_t>(made.special_ids.size() - i));
  }
  const std::string marked = made.special_tokens.back() + "hi" + made.special_tokens.front();
  const std::vector<TokenId> ids = tokenizer.encode(marked);
  EXPECT_EQ(ids.front(), made.special_ids.back());
  EXPECT_EQ(ids.back(), made.special_ids.front());
  EXPECT_EQ(tokenizer.decode(ids, /*skip_special=*/true), "hi");

  // The merges are the text's: common English takes far fewer tokens than bytes.
  const std::string english = "The teacher said that the machine is counting the pieces.";
  EXPECT_LT(tokenizer.encode(english).size() * 3, english.size());
}

TEST_P(EachArch, ConfigFilesAreWhatTransformersWrites) {
  TempDir dir;
  write_model(dir.path(), arch(), tiny(arch()), 1);
  const MadeTokenizer made = make_tokenizer(arch());
  const json config = read_json(dir.path() / "config.json");
  EXPECT_EQ(config["model_type"], GetParam());
  ASSERT_EQ(config["architectures"].size(), 1u);
  EXPECT_EQ(config["dtype"], "bfloat16");
  EXPECT_EQ(config["rope_parameters"]["rope_type"], "default");
  EXPECT_EQ(config["eos_token_id"].get<std::vector<TokenId>>(), made.eos_ids);
  EXPECT_EQ(config["bos_token_id"], *made.bos_id);
  EXPECT_EQ(config.contains("head_dim"), arch() != ModelArch::qwen2);
  EXPECT_EQ(config.contains("attention_bias"), arch() != ModelArch::qwen2);
  EXPECT_EQ(config.contains("layer_types"), arch() != ModelArch::llama);
  const ModelConfig parsed = read_model_config(dir.path());
  EXPECT_EQ(parsed.attention_bias, arch() == ModelArch::qwen2);
  EXPECT_EQ(parsed.qk_norm, arch() == ModelArch::qwen3);
  EXPECT_EQ(parsed.eos_token_ids.size(), 2u);

  const json generation = read_json(dir.path() / "generation_config.json");
  EXPECT_EQ(generation["eos_token_id"], config["eos_token_id"]);
  const json tokenizer_config = read_json(dir.path() / "tokenizer_config.json");
  const std::string chat = tokenizer_config["chat_template"];
  const bool llama = arch() == ModelArch::llama;
  EXPECT_NE(chat.find(llama ? "<|start_header_id|>" : "<|im_start|>"), std::string::npos);
  EXPECT_EQ(tokenizer_config["eos_token"], llama ? "<|eot_id|>" : "<|im_end|>");
  EXPECT_EQ(tokenizer_config["bos_token"], llama ? json("<|begin_of_text|>") : json());
}

INSTANTIATE_TEST_SUITE_P(Archs, EachArch, ::testing::Values("llama", "qwen2", "qwen3"));

std::string file_bytes(const fs::path& path) { return read_file(path); }

TEST(ModelWriter, TheSeedAloneDecidesTheBytes) {
  TempDir dir;
  const ModelShape shape = tiny(ModelArch::qwen3);
  write_model(dir.path() / "a", ModelArch::qwen3, shape, 42);
  write_model(dir.path() / "b", ModelArch::qwen3, shape, 42);
  write_model(dir.path() / "c", ModelArch::qwen3, shape, 43);
  for (const char* name : {"model.safetensors", "config.json", "tokenizer.json"}) {
    EXPECT_EQ(file_bytes(dir.path() / "a" / name), file_bytes(dir.path() / "b" / name)) << name;
  }
  EXPECT_NE(file_bytes(dir.path() / "a" / "model.safetensors"),
            file_bytes(dir.path() / "c" / "model.safetensors"));
}

TEST(ModelWriter, Bf16AndF32BothLoadAndAgree) {
  TempDir dir;
  ModelShape shape = tiny(ModelArch::llama);
  const WrittenModel bf16 = write_model(dir.path() / "bf16", ModelArch::llama, shape, 5);
  shape.dtype = "float32";
  const WrittenModel f32 = write_model(dir.path() / "f32", ModelArch::llama, shape, 5);
  EXPECT_EQ(bf16.parameters, f32.parameters);
  EXPECT_GT(fs::file_size(dir.path() / "f32" / "model.safetensors"),
            fs::file_size(dir.path() / "bf16" / "model.safetensors") * 19 / 10);
  const LlamaModel a = LlamaModel::load(dir.path() / "bf16");
  const LlamaModel b = LlamaModel::load(dir.path() / "f32");
  EXPECT_EQ(a.config().dtype, "bfloat16");
  EXPECT_EQ(b.config().dtype, "float32");
  const std::vector<TokenId> tokens{10, 300, 700};
  KvCache ca(a.config(), 16), cb(b.config(), 16);
  const std::vector<float> la = forward(a, tokens, ca);
  const std::vector<float> lb = forward(b, tokens, cb);
  ASSERT_EQ(la.size(), lb.size());
  float worst = 0.0f;
  for (std::size_t i = 0; i < la.size(); ++i) worst = std::max(worst, std::fabs(la[i] - lb[i]));
  EXPECT_LT(worst, 0.05f) << "the same draws, rounded to bf16 or not";
}

TEST(ModelWriter, Qwen25PresetHasTheRealShapes) {
  const ModelShape s = model_shape("qwen2.5-0.5b", ModelArch::qwen2);
  EXPECT_EQ(s.vocab_size, 151936);
  EXPECT_EQ(s.hidden_size, 896);
  EXPECT_EQ(s.num_layers, 24);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_NO_THROW(check_shape(ModelArch::qwen2, s));
  EXPECT_EQ(parameter_count(ModelArch::qwen2, s), 494032768);  // Qwen2.5-0.5B's count
  EXPECT_THROW(model_shape("gpt-5", ModelArch::qwen2), std::invalid_argument);
}

TEST(ModelWriter, Llama3PresetHasTheRealShapes) {
  const ModelShape s = model_shape("llama-3-8b", ModelArch::llama);
  EXPECT_EQ(s.vocab_size, 128256);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_FALSE(s.tie_word_embeddings);
  EXPECT_NO_THROW(check_shape(ModelArch::llama, s));
  EXPECT_EQ(parameter_count(ModelArch::llama, s), 8030261248);  // Llama-3.1-8B's count
}

TEST(ModelWriter, BadShapesAndTooSmallVocabsAreRefusedBeforeWriting) {
  TempDir dir;
  const auto refused = [&](ModelArch arch, ModelShape shape) {
    EXPECT_THROW(write_model(dir.path() / "m", arch, shape, 0), std::invalid_argument);
    EXPECT_FALSE(fs::exists(dir.path() / "m"));
  };
  ModelShape s = tiny(ModelArch::qwen2);
  s.vocab_size = make_tokenizer(ModelArch::qwen2).size - 1;
  refused(ModelArch::qwen2, s);
  s = tiny(ModelArch::llama);
  s.num_kv_heads = 3;
  refused(ModelArch::llama, s);
  s = tiny(ModelArch::llama);
  s.head_dim = 15;
  refused(ModelArch::llama, s);
  s = tiny(ModelArch::qwen2);
  s.head_dim = 32;  // 4 x 32 != 64, and qwen2's config cannot say so
  refused(ModelArch::qwen2, s);
  s = tiny(ModelArch::qwen3);
  s.dtype = "float16";
  refused(ModelArch::qwen3, s);
  EXPECT_THROW(writable_arch("mistral"), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(dir.path())) << "no staging directory is left behind";
}

TEST(ModelWriter, AnExistingDirectoryKeepsItsOtherFiles) {
  TempDir dir;
  std::ofstream(dir.path() / "notes.txt") << "mine";
  std::ofstream(dir.path() / "config.json") << "old";
  const WrittenModel written = write_model(dir.path(), ModelArch::qwen2, tiny(ModelArch::qwen2), 3);
  EXPECT_EQ(written.files.size(), 5u);
  EXPECT_EQ(file_bytes(dir.path() / "notes.txt"), "mine");
  EXPECT_EQ(read_model_config(dir.path()).arch, ModelArch::qwen2);
  const auto entries = std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator());
  EXPECT_EQ(entries, 6) << "the five model files and notes.txt, no staging directory";
  std::uintmax_t total = 0;
  for (const std::string& name : written.files) total += fs::file_size(dir.path() / name);
  EXPECT_EQ(written.bytes, total);
}

}  // namespace
}  // namespace baton
