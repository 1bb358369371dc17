// A model loaded from a GGUF file against llama.cpp running the same file:
// tests/data/gguf/tiny-llama-bf16.gguf is `baton make-model --arch llama --seed 7 --vocab
// 640` written by bench/baton_gguf (llama.cpp's names, its interleaved q/k rows for the
// "llama" arch, the vocabulary as tokenizer.ggml.*), and tiny-llama-bf16.json what
// node-llama-cpp makes of it (bench/peers/gguf_model_reference.mjs): the ids of hard
// strings and 16 greedy tokens. Also the same model from its safetensors directory:
// equal config and equal logits (both bf16 weights, computed alike). tiny-llama-spm.gguf is
// the same model with the SentencePiece tokenizer of tests/data/tokenizers/llama2_style as
// llama.cpp's "llama" vocabulary (scores, no merges; the model folder with that
// tokenizer.json copied in, through baton_gguf --type bf16), and tiny-llama-spm.json its
// reference (gguf_model_reference.mjs over the strings of scripts/reference_strings.py).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "baton/model/chat/chat_template.h"
#include "baton/model/cpu/forward_pass.h"
#include "baton/model/files/ggml_blocks.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/model/writer/model_writer.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

using testing::read_json;

const std::filesystem::path kGguf =
    std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-llama-bf16.gguf";

nlohmann::json reference() {
  std::ifstream in(std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-llama-bf16.json");
  return nlohmann::json::parse(in);
}

TEST(GgufModel, TokenizesAsLlamaCpp) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kGguf);
  const nlohmann::json ref = reference();  // kept: a loop over reference()[...] would outlive it
  for (const auto& entry : ref["tokenize"]) {
    const auto text = entry["text"].get<std::string>();
    EXPECT_EQ(tokenizer.encode(text), entry["ids"].get<std::vector<TokenId>>()) << text;
  }
}

TEST(GgufModel, ASentencePieceVocabularyTokenizesAsLlamaCpp) {
  const std::filesystem::path data(BATON_TEST_DATA);
  const BpeTokenizer tokenizer =
      BpeTokenizer::from_directory(data / "gguf" / "tiny-llama-spm.gguf");
  const nlohmann::json llama_cpp = read_json(data / "gguf" / "tiny-llama-spm.json");
  // The tokenizers library's decoding of the same SentencePiece model's tokenizer.json.
  std::map<std::string, std::string> decoded;
  for (const auto& entry : read_json(data / "tokenizers" / "llama2_style" / "reference.json")) {
    decoded[entry["text"].get<std::string>()] = entry["decoded"].get<std::string>();
  }
  std::size_t decodes_checked = 0;
  for (const auto& entry : llama_cpp["tokenize"]) {
    const auto text = entry["text"].get<std::string>();
    const auto ids = entry["ids"].get<std::vector<TokenId>>();
    EXPECT_EQ(tokenizer.encode(text), ids) << text;
    if (const auto it = decoded.find(text); it != decoded.end()) {
      EXPECT_EQ(tokenizer.decode(ids), it->second) << text;
      ++decodes_checked;
    }
  }
  EXPECT_GE(decodes_checked, 10u);
}

TEST(GgufModel, GreedyTokensMatchLlamaCpp) {
  const LlamaModel model = LlamaModel::load(kGguf);
  const nlohmann::json ref = reference();
  const auto prompt = ref["prompt"].get<std::vector<TokenId>>();
  KvCache cache(model.config(), 64);
  std::vector<float> logits = forward(model, prompt, cache);
  const auto vocab = static_cast<std::ptrdiff_t>(model.config().vocab_size);
  std::vector<TokenId> generated;
  for (std::size_t i = 0; i < ref["greedy"].size(); ++i) {
    const auto last = logits.end() - vocab;
    const auto next = static_cast<TokenId>(std::max_element(last, logits.end()) - last);
    generated.push_back(next);
    logits = forward(model, std::span<const TokenId>(&next, 1), cache);
  }
  EXPECT_EQ(generated, ref["greedy"].get<std::vector<TokenId>>());
}

TEST(GgufModel, EqualsTheSafetensorsDirectoryItWasWrittenFrom) {
  const testing::TempDir dir;
  ModelShape shape = model_shape("tiny", ModelArch::llama);
  shape.vocab_size = 640;
  write_model(dir.path(), ModelArch::llama, shape, 7);
  const LlamaModel from_dir = LlamaModel::load(dir.path());
  const LlamaModel from_gguf = LlamaModel::load(kGguf);
  const ModelConfig& a = from_dir.config();
  const ModelConfig& b = from_gguf.config();
  EXPECT_EQ(b.arch, a.arch);
  EXPECT_EQ(b.vocab_size, a.vocab_size);
  EXPECT_EQ(b.num_layers, a.num_layers);
  EXPECT_EQ(b.num_kv_heads, a.num_kv_heads);
  EXPECT_EQ(b.head_dim, a.head_dim);
  EXPECT_FLOAT_EQ(static_cast<float>(b.rms_norm_eps), static_cast<float>(a.rms_norm_eps));
  EXPECT_EQ(b.rope_theta, a.rope_theta);
  EXPECT_EQ(b.tie_word_embeddings, a.tie_word_embeddings);
  const std::vector<TokenId> prompt{5, 77, 300, 12, 401};
  KvCache ca(a, 16);
  KvCache cb(b, 16);
  EXPECT_EQ(forward(from_gguf, prompt, cb), forward(from_dir, prompt, ca));
}

// A file of Q8_0 weights runs on the q8 kernels unless told otherwise, each matrix exactly
// the file's blocks (ggml_to_float, tested against gguf-py, gives the reference values).
TEST(GgufModel, Q8_0WeightsAreHeldAsStoredOnTheQ8Kernels) {
  const std::filesystem::path file =
      std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-qwen2-q8_0.gguf";
  const LlamaModel model = LlamaModel::load(file);
  const ModelWeights weights = ModelWeights::open(file);
  for (const auto& [name, matrix] :
       {std::pair{"model.layers.0.mlp.up_proj.weight", &model.layers()[0].up},
        std::pair{"model.layers.0.self_attn.k_proj.weight", &model.layers()[0].k},
        std::pair{"model.embed_tokens.weight", &model.embedding()}}) {
    ASSERT_TRUE(matrix->is_q8()) << name;
    const TensorView& t = weights.at(name);
    ASSERT_EQ(t.ggml_type, kGgmlQ8_0) << name;
    std::vector<float> held(static_cast<std::size_t>(matrix->rows()) * matrix->cols());
    matrix->q8().dequantize_rows(0, matrix->rows(), held.data());
    EXPECT_EQ(held, to_float(t)) << name;
  }
  EXPECT_EQ(LlamaModel::load(file, {.weights = WeightFormat::bf16}).layers()[0].up.format(),
            WeightFormat::bf16);
  EXPECT_EQ(LlamaModel::load(kGguf).layers()[0].up.format(), WeightFormat::bf16);  // bf16 file
}

TEST(GgufModel, AFileWithoutAChatTemplateSaysSo) {
  try {
    load_chat_template(kGguf, std::nullopt);
    FAIL() << "no template expected";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("tiny-llama-bf16.gguf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no chat template"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton
