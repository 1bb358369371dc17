// GGUF metadata is checked as strictly as config.json (gguf_config.h): the header of the
// committed tiny Qwen2 file with one key changed at a time must be refused with an error
// naming that key; and a model path that is a file but not a GGUF file says so.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "baton/model/config/gguf_config.h"
#include "baton/model/files/gguf_file.h"
#include "baton/model/files/mapped_file.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "temp_dir.h"

namespace baton {
namespace {

const std::filesystem::path kQwen2 =
    std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-qwen2-q8_0.gguf";

GgufHeader qwen2_header() {
  const MappedFile file(kQwen2);
  return read_gguf_header(file.bytes(), "tiny.gguf");
}

// The error of the config made from the header with `key` set to `value`; "" if none.
std::string error_with(const std::string& key, const nlohmann::ordered_json& value) {
  GgufHeader header = qwen2_header();
  header.metadata[key] = value;
  try {
    gguf_model_config(header, nullptr, "tiny.gguf");
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "";
}

TEST(GgufMetadata, TheUnchangedHeaderMakesAConfig) {
  const ModelConfig c = gguf_model_config(qwen2_header(), nullptr, "tiny.gguf");
  EXPECT_EQ(c.max_position_embeddings, 2048);
  EXPECT_EQ(c.head_dim, 16);
}

TEST(GgufMetadata, ContextLengthMustBeAPositiveInt) {
  for (const nlohmann::ordered_json& bad :
       {nlohmann::ordered_json(0), nlohmann::ordered_json(-5),
        nlohmann::ordered_json(std::uint64_t{1} << 31), nlohmann::ordered_json(std::uint64_t{1} << 63),
        nlohmann::ordered_json(2048.5), nlohmann::ordered_json("2048")}) {
    const std::string error = error_with("qwen2.context_length", bad);
    EXPECT_NE(error.find("'qwen2.context_length'"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_EQ(error_with("qwen2.context_length", std::numeric_limits<int>::max()), "");
}

TEST(GgufMetadata, RopeFrequencyBaseMustBePositiveAndFinite) {
  for (const double bad : {0.0, -10000.0, std::numeric_limits<double>::infinity()}) {
    const std::string error = error_with("qwen2.rope.freq_base", bad);
    EXPECT_NE(error.find("'qwen2.rope.freq_base'"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_NE(error_with("qwen2.rope.freq_base", "1e6").find("'qwen2.rope.freq_base' is not a number"),
            std::string::npos);
}

TEST(GgufMetadata, RopeDimensionCountMustBeTheWholeHead) {
  for (const int bad : {0, -16, 8}) {
    const std::string error = error_with("qwen2.rope.dimension_count", bad);
    EXPECT_NE(error.find("'qwen2.rope.dimension_count'"), std::string::npos)
        << bad << ": " << error;
  }
  EXPECT_EQ(error_with("qwen2.rope.dimension_count", 16), "");
}

TEST(GgufMetadata, SizesAndEpsilonAreChecked) {
  EXPECT_NE(error_with("qwen2.embedding_length", 0).find("'qwen2.embedding_length'"),
            std::string::npos);
  EXPECT_NE(error_with("qwen2.block_count", std::uint64_t{1} << 40).find("'qwen2.block_count'"),
            std::string::npos);
  EXPECT_NE(error_with("qwen2.attention.head_count_kv", 0).find("'qwen2.attention.head_count_kv'"),
            std::string::npos);
  EXPECT_NE(error_with("qwen2.attention.layer_norm_rms_epsilon", -1e-6)
                .find("'qwen2.attention.layer_norm_rms_epsilon'"),
            std::string::npos);
}

// What loading a model from `bytes` written to a .gguf file says.
std::string load_error(const std::string& bytes) {
  const testing::TempDir dir;
  const std::filesystem::path file = dir.path() / "model.gguf";
  std::ofstream(file, std::ios::binary) << bytes;
  try {
    LlamaModel::load(file);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "loaded";
}

TEST(GgufMetadata, AFileThatIsNotGgufSaysSo) {
  const std::string wrong_magic = load_error("GGUX" + std::string(60, '\0'));
  EXPECT_NE(wrong_magic.find("not a GGUF file: bad magic"), std::string::npos) << wrong_magic;
  EXPECT_EQ(wrong_magic.find("config.json"), std::string::npos) << wrong_magic;
  const std::string tiny = load_error("GG");
  EXPECT_NE(tiny.find("not a GGUF file: 2 bytes, too short"), std::string::npos) << tiny;
  const std::string empty = load_error("");
  EXPECT_NE(empty.find("not a GGUF file: 0 bytes"), std::string::npos) << empty;
}

}  // namespace
}  // namespace baton
