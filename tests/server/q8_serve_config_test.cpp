// The serve config's `weights` key: bf16 unless set, q8 and f32 read, fp8 as stored on the
// host and E4M3 on a GPU (an error on the CPU backend), anything else an error naming the
// key, its line and the formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "baton/server/config/serve_config.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

// A config file of one chat model whose table ends with `keys`.
std::filesystem::path config_with(const testing::TempDir& dir, const std::string& keys) {
  std::filesystem::create_directories(dir.path() / "chat");
  std::ofstream(dir.path() / "chat" / "config.json") << "{}";
  const std::filesystem::path file = dir.path() / "baton.toml";
  std::ofstream(file) << "[models.chat]\npath = \"chat\"\n" << keys << "\n";
  return file;
}

TEST(Q8ServeConfig, WeightsDefaultToAsStoredAndReadEachFormat) {
  testing::TempDir dir;
  EXPECT_FALSE(read_serve_config(config_with(dir, "")).models.at(0).weights.has_value());
  EXPECT_EQ(read_serve_config(config_with(dir, "weights = \"q8\"")).models.at(0).weights,
            WeightFormat::q8);
  EXPECT_EQ(read_serve_config(config_with(dir, "weights = \"f32\"")).models.at(0).weights,
            WeightFormat::f32);
}

TEST(Q8ServeConfig, AnUnknownFormatNamesTheKeyAndTheFormats) {
  testing::TempDir dir;
  try {
    read_serve_config(config_with(dir, "weights = \"q4\""));
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(
        message.find(":3:11: models.chat.weights = \"q4\": expected one of bf16, f32, q8, fp8"),
        std::string::npos)
        << message;
  }
}

TEST(Q8ServeConfig, Fp8IsAsStoredOnTheHostAndE4m3OnTheDevice) {
  testing::TempDir dir;
  const ModelSpec plain = read_serve_config(config_with(dir, "")).models.at(0);
  EXPECT_EQ(plain.device_precision, DevicePrecision::bf16);
  ServeConfig config = read_serve_config(config_with(dir, "weights = \"fp8\""));
  EXPECT_FALSE(config.models.at(0).weights.has_value());
  EXPECT_EQ(config.models.at(0).device_precision, DevicePrecision::fp8);
  config.backend = "cuda";
  EXPECT_NO_THROW(validate(config));
}

TEST(Q8ServeConfig, Fp8OnTheCpuBackendNamesTheKeyAndTheBackend) {
  testing::TempDir dir;
  const ServeConfig config = read_serve_config(config_with(dir, "weights = \"fp8\""));
  try {
    validate(config);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("models.chat.weights = \"fp8\": fp8 weights are held on a GPU "
                           "(backend = \"cuda\"); "
                           "backend = \"cpu\""),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace baton
