#include "baton/model/weights/model_weights.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::le_bytes;
using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_file;

// A safetensors file holding one F32 tensor per name, tensor i holding {i + 0.5}.
std::string shard_bytes(const std::vector<std::string>& names, float first_value) {
  std::string header = "{";
  std::vector<float> values;
  for (std::size_t i = 0; i < names.size(); ++i) {
    header += (i == 0 ? "\"" : ", \"") + names[i] + R"(": {"dtype": "F32", "shape": [1], )" +
              R"("data_offsets": [)" + std::to_string(4 * i) + ", " + std::to_string(4 * i + 4) +
              "]}";
    values.push_back(first_value + static_cast<float>(i));
  }
  return safetensors_bytes(header + "}", le_bytes(values));
}

// The message of the ModelFileError that opening `dir` throws; fails the test if none.
std::string error_of(const std::filesystem::path& dir) {
  try {
    ModelWeights::open(dir);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelFileError";
  return {};
}

// Two shards and an index: a, b in shard 1; c in shard 2.
void write_sharded(const TempDir& dir) {
  write_file(dir.path() / "model-00001-of-00002.safetensors", shard_bytes({"a", "b"}, 1.0f));
  write_file(dir.path() / "model-00002-of-00002.safetensors", shard_bytes({"c"}, 10.0f));
  write_file(dir.path() / "model.safetensors.index.json", R"({
    "metadata": {"total_size": 12},
    "weight_map": {"a": "model-00001-of-00002.safetensors",
                   "b": "model-00001-of-00002.safetensors",
                   "c": "model-00002-of-00002.safetensors"}})");
}

TEST(ModelWeights, SingleFile) {
  const TempDir dir;
  write_file(dir.path() / "model.safetensors", shard_bytes({"x", "y"}, 0.5f));
  const ModelWeights weights = ModelWeights::open(dir.path());
  EXPECT_EQ(weights.names(), (std::vector<std::string_view>{"x", "y"}));
  EXPECT_EQ(to_float(weights.at("y")), std::vector<float>{1.5f});
  EXPECT_EQ(weights.find("z"), nullptr);
  ASSERT_EQ(weights.files().size(), 1u);
  EXPECT_EQ(weights.files()[0].string(), (dir.path() / "model.safetensors").string());
}

TEST(ModelWeights, ShardedWithAnIndex) {
  const TempDir dir;
  write_sharded(dir);
  const ModelWeights weights = ModelWeights::open(dir.path());
  EXPECT_EQ(weights.names(), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(to_float(weights.at("a")), std::vector<float>{1.0f});
  EXPECT_EQ(to_float(weights.at("b")), std::vector<float>{2.0f});
  EXPECT_EQ(to_float(weights.at("c")), std::vector<float>{10.0f});
  EXPECT_EQ(weights.files().size(), 2u);  // each shard opened once
  try {
    weights.at("d");
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir.path() / "model.safetensors.index.json").string() + ": no tensor 'd'");
  }
}

TEST(ModelWeights, ViewsSurviveAMove) {
  const TempDir dir;
  write_sharded(dir);
  ModelWeights first = ModelWeights::open(dir.path());
  const TensorView* c = first.find("c");
  const ModelWeights second = std::move(first);
  EXPECT_EQ(second.find("c"), c);
  EXPECT_EQ(to_float(*c), std::vector<float>{10.0f});
}

TEST(ModelWeights, NeitherFileNamesTheDirectoryAndBothNames) {
  const TempDir dir;
  EXPECT_EQ(error_of(dir.path()),
            dir.path().string() +
                ": no weights: neither model.safetensors nor model.safetensors.index.json exists");
}

TEST(ModelWeights, MissingShard) {
  const TempDir dir;
  write_sharded(dir);
  std::filesystem::remove(dir.path() / "model-00002-of-00002.safetensors");
  EXPECT_EQ(error_of(dir.path()), (dir.path() / "model-00002-of-00002.safetensors").string() +
                                      ": cannot open: No such file or directory");
}

TEST(ModelWeights, TensorAbsentFromItsShard) {
  const TempDir dir;
  write_sharded(dir);
  write_file(dir.path() / "model-00002-of-00002.safetensors", shard_bytes({"other"}, 0.0f));
  EXPECT_EQ(error_of(dir.path()),
            (dir.path() / "model.safetensors.index.json").string() +
                ": tensor 'c' is listed in shard 'model-00002-of-00002.safetensors' but absent "
                "from it");
}

TEST(ModelWeights, MalformedShardNamesItsFile) {
  const TempDir dir;
  write_sharded(dir);
  write_file(dir.path() / "model-00001-of-00002.safetensors", "short");
  EXPECT_NE(error_of(dir.path()).find("model-00001-of-00002.safetensors: file is 5 bytes"),
            std::string::npos);
}

TEST(ModelWeights, RefusesShardNamesOutsideTheDirectory) {
  for (const std::string shard :
       {"../model.safetensors", "/etc/passwd", "..", ".", "", "sub/model.safetensors", "a\\\\b"}) {
    const TempDir dir;
    write_file(dir.path() / "model.safetensors.index.json",
               R"({"weight_map": {"w": ")" + shard + R"("}})");
    EXPECT_NE(error_of(dir.path()).find("is not a plain file name in the model directory"),
              std::string::npos)
        << shard;
  }
}

TEST(ModelWeights, MalformedIndex) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not valid JSON"},
      {"", "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"metadata": {}})", "missing \"weight_map\""},
      {R"({"weight_map": []})", "\"weight_map\" is not an object"},
      {R"({"weight_map": {"w": 3}})", "tensor 'w': shard is not a string"},
  };
  for (const auto& [index, expected] : cases) {
    const TempDir dir;
    write_file(dir.path() / "model.safetensors.index.json", index);
    const std::string error = error_of(dir.path());
    EXPECT_NE(error.find("model.safetensors.index.json: " + expected), std::string::npos)
        << index << " -> " << error;
  }
}

TEST(ModelWeights, SingleFileWinsOverAnIndex) {
  const TempDir dir;
  write_sharded(dir);
  write_file(dir.path() / "model.safetensors", shard_bytes({"only"}, 0.0f));
  EXPECT_EQ(ModelWeights::open(dir.path()).names(), std::vector<std::string_view>{"only"});
}

}  // namespace
}  // namespace baton
