// ggml blocks to float against llama.cpp's own converter: tests/data/gguf/ggml_blocks.json
// holds two random blocks of every quantized type baton reads and gguf-py's dequantize of
// them (scripts/reference/make_ggml_blocks_reference.py). Tolerance: 1e-6 relative (both
// compute in float32; numpy may order a product differently).
#include "baton/model/files/ggml_blocks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace baton {
namespace {

std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

TEST(GgmlBlocks, EveryQuantizedTypeMatchesLlamaCppsConverter) {
  std::ifstream in(std::filesystem::path(BATON_TEST_DATA) / "gguf" / "ggml_blocks.json");
  const auto reference = nlohmann::json::parse(in);
  ASSERT_EQ(reference.size(), 8u);
  for (const auto& [name, r] : reference.items()) {
    const auto type = r["type"].get<std::uint32_t>();
    const std::vector<std::byte> blocks = from_hex(r["hex"].get<std::string>());
    const auto expected = r["values"].get<std::vector<double>>();
    std::vector<float> got(expected.size());
    ggml_to_float(type, blocks, got);
    ASSERT_TRUE(ggml_quantized(type)) << name;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], 1e-6 * std::max(1.0, std::abs(expected[i])))
          << name << " value " << i;
    }
  }
}

TEST(GgmlBlocks, PlainTypesAreOneValueABlock) {
  const std::uint16_t f16_half = 0x3800;  // 0.5
  const std::uint16_t bf16_two = 0x4000;  // 2.0
  float out = 0;
  ggml_to_float(1, std::as_bytes(std::span(&f16_half, 1)), std::span(&out, 1));
  EXPECT_EQ(out, 0.5f);
  ggml_to_float(30, std::as_bytes(std::span(&bf16_two, 1)), std::span(&out, 1));
  EXPECT_EQ(out, 2.0f);
  EXPECT_FALSE(ggml_quantized(0));
}

TEST(GgmlBlocks, UnknownTypesAndMismatchedSizesAreRefused) {
  std::vector<std::byte> bytes(34);
  std::vector<float> values(32);
  EXPECT_FALSE(ggml_block(10).has_value());  // q2_K: not read
  EXPECT_THROW(ggml_to_float(10, bytes, values), std::invalid_argument);
  EXPECT_THROW(ggml_to_float(8, std::span(bytes).first(33), values), std::invalid_argument);
  std::vector<float> partial(31);
  EXPECT_THROW(ggml_to_float(8, bytes, partial), std::invalid_argument);
}

}  // namespace
}  // namespace baton
