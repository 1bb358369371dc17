// ModelSource: a model opened once. A GGUF file is mapped and its header parsed once, and
// every reader of the load (config, weights, tokenizer, chat template) works from that one
// open file; a Hugging Face directory has none; a directory of two GGUF files is refused.
#include "baton/model/files/model_source.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "baton/model/chat/chat_template.h"
#include "baton/model/config/config_reader.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/model/writer/model_writer.h"
#include "temp_dir.h"
#include "test_data.h"

namespace baton {
namespace {

const std::filesystem::path kTinyGguf =
    std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-llama-bf16.gguf";

TEST(ModelSource, AGgufFileIsOpenedOnceForEveryReader) {
  const ModelSource source = ModelSource::open(kTinyGguf);
  ASSERT_NE(source.gguf(), nullptr);
  EXPECT_EQ(source.gguf()->path(), kTinyGguf);
  EXPECT_EQ(source.shared_gguf().use_count(), 1);
  const LlamaModel model = LlamaModel::load(source);
  // The weights keep the source's open file, not a map of their own.
  EXPECT_EQ(source.shared_gguf().use_count(), 2);
  EXPECT_EQ(read_model_config(source).vocab_size, model.config().vocab_size);
  const BpeTokenizer tokenizer = BpeTokenizer::from_source(source);
  EXPECT_FALSE(tokenizer.encode("hello world").empty());
  // The file has no template; its special tokens come from the same open file.
  const ChatTemplate from_source = load_chat_template(source, ChatFamily::chatml);
  EXPECT_FALSE(from_source.special_tokens.empty());
  EXPECT_EQ(from_source.special_tokens,
            load_chat_template(kTinyGguf, ChatFamily::chatml).special_tokens);
  EXPECT_EQ(source.shared_gguf().use_count(), 2);  // the readers keep nothing open
}

TEST(ModelSource, ADirectoryOfOneGgufFileIsThatFile) {
  const testing::TempDir dir;
  std::filesystem::copy_file(kTinyGguf, dir.path() / "model.gguf");
  const ModelSource source = ModelSource::open(dir.path());
  ASSERT_NE(source.gguf(), nullptr);
  EXPECT_EQ(source.gguf()->path(), dir.path() / "model.gguf");
  EXPECT_EQ(source.path(), dir.path());
}

TEST(ModelSource, AHuggingFaceDirectoryHasNoGgufFile) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, model_shape("tiny", ModelArch::llama), 1);
  const ModelSource source = ModelSource::open(dir.path());
  EXPECT_EQ(source.gguf(), nullptr);
  EXPECT_EQ(source.file("tokenizer.json"), dir.path() / "tokenizer.json");
  EXPECT_EQ(read_model_config(source).arch, ModelArch::llama);
}

TEST(ModelSource, TwoGgufFilesInADirectoryAreRefusedByName) {
  const testing::TempDir dir;
  std::filesystem::copy_file(kTinyGguf, dir.path() / "a.gguf");
  std::filesystem::copy_file(kTinyGguf, dir.path() / "b.gguf");
  try {
    (void)ModelSource::open(dir.path());
    FAIL() << "two GGUF files opened";
  } catch (const ModelFileError& error) {
    EXPECT_NE(std::string(error.what()).find("a.gguf, b.gguf"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace baton
