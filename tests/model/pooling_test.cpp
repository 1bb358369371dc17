// Pooling from sentence-transformers exports as real models publish them (modules.json
// with Transformer, Pooling and Normalize; 1_Pooling/config.json with the boolean flags
// or a pooling_mode string), the default without them, the errors, and the arithmetic.
#include "baton/model/output/pooling.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "baton/model/files/model_file_error.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

class PoolingFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("baton-pooling-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "1_Pooling");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  static std::string modules(bool normalize, const std::string& extra = "") {
    return R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"})" +
           std::string(normalize ? R"(,
 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})"
                                 : "") +
           extra + "]";
  }
  static std::string flags(bool mean, bool last, bool cls, bool max = false) {
    auto b = [](bool v) { return v ? "true" : "false"; };
    return std::string(R"({"word_embedding_dimension": 64, "pooling_mode_cls_token": )") + b(cls) +
           R"(, "pooling_mode_mean_tokens": )" + b(mean) + R"(, "pooling_mode_max_tokens": )" +
           b(max) + R"(, "pooling_mode_mean_sqrt_len_tokens": false, "pooling_mode_weightedmean_tokens": false, "pooling_mode_lasttoken": )" +
           b(last) + R"(, "include_prompt": true})";
  }
  fs::path dir_;
};

TEST_F(PoolingFiles, WithoutAnExportTheLastTokenNormalised) {
  fs::remove_all(dir_ / "1_Pooling");
  const Pooling p = read_pooling(dir_);
  EXPECT_EQ(p.mode, PoolingMode::last_token);
  EXPECT_TRUE(p.normalize);
  EXPECT_FALSE(p.from_sentence_transformers);
}

TEST_F(PoolingFiles, Qwen3EmbeddingStyleLastTokenAndNormalize) {
  write("modules.json", modules(true));
  write("1_Pooling/config.json", flags(false, true, false));
  const Pooling p = read_pooling(dir_);
  EXPECT_EQ(p.mode, PoolingMode::last_token);
  EXPECT_TRUE(p.normalize);
  EXPECT_TRUE(p.from_sentence_transformers);
}

TEST_F(PoolingFiles, MeanWithoutNormalizeAndAPoolingModeString) {
  write("modules.json", modules(false));
  write("1_Pooling/config.json", flags(true, false, false));
  Pooling p = read_pooling(dir_);
  EXPECT_EQ(p.mode, PoolingMode::mean);
  EXPECT_FALSE(p.normalize);
  write("1_Pooling/config.json", R"({"word_embedding_dimension": 64, "pooling_mode": "cls"})");
  p = read_pooling(dir_);
  EXPECT_EQ(p.mode, PoolingMode::cls);
}

TEST_F(PoolingFiles, WhatCannotRunIsAnErrorNamingTheFile) {
  const struct {
    std::string modules;
    std::string config;
    const char* message;
  } cases[] = {
      {modules(true), flags(false, false, false, true), "pooling_mode_max_tokens is not supported"},
      {modules(true), flags(true, true, false), "exactly one of"},
      {modules(true, R"(, {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"})"),
       flags(true, false, false), "sentence_transformers.models.Dense' is not supported"},
      {"{}", flags(true, false, false), "expected a JSON array"},
      {modules(true), "{not json", "not valid JSON"},
      {modules(true), R"({"pooling_mode_mean_tokens": "yes"})", "must be true or false"},
  };
  for (const auto& c : cases) {
    write("modules.json", c.modules);
    write("1_Pooling/config.json", c.config);
    try {
      read_pooling(dir_);
      ADD_FAILURE() << c.message << ": accepted";
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(dir_.string()), std::string::npos) << e.what();
    }
  }
}

TEST(PoolingMath, MeanLastAndClsWithAndWithoutNormalisation) {
  const std::vector<float> hidden = {1, 2, 3, 4, 5, 6};  // 3 tokens x 2
  EXPECT_EQ(pool({PoolingMode::mean, false}, hidden, 3, 2), (std::vector<float>{3, 4}));
  EXPECT_EQ(pool({PoolingMode::last_token, false}, hidden, 3, 2), (std::vector<float>{5, 6}));
  EXPECT_EQ(pool({PoolingMode::cls, false}, hidden, 3, 2), (std::vector<float>{1, 2}));
  const std::vector<float> unit = pool({PoolingMode::mean, true}, hidden, 3, 2);
  EXPECT_NEAR(unit[0], 0.6f, 1e-7);
  EXPECT_NEAR(unit[1], 0.8f, 1e-7);
  EXPECT_EQ(pool({PoolingMode::mean, true}, std::vector<float>{0, 0}, 1, 2),
            (std::vector<float>{0, 0}));
  EXPECT_THROW(pool({}, hidden, 2, 2), std::invalid_argument);
  EXPECT_EQ(parse_pooling_mode("lasttoken"), PoolingMode::last_token);
  EXPECT_THROW(parse_pooling_mode("max"), std::invalid_argument);
}

}  // namespace
}  // namespace baton
