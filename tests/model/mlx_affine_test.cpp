// MLX's affine-quantized weights (mlx-lm's 2-8-bit exports): codes packed here bit by bit
// as MLX documents them (a little-endian bit stream per row in uint32 words), scales and
// biases in bf16, dequantized at load to scale * code + bias; a whole model so quantized
// gives the logits of the same weights stored dequantized in f32.
#include "baton/model/weights/mlx_affine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "baton/model/cpu/forward_pass.h"
#include "baton/model/files/half.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/model/weights/weight_matrix.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

// One MLX-quantized weight: its codes, and bf16 scales and biases per group.
struct Quantized {
  std::vector<std::uint32_t> words;           // rows x (cols * bits / 32)
  std::vector<std::uint16_t> scales, biases;  // bf16, rows x (cols / group)
};

// Packs `codes` [rows x cols] bit by bit: code c of a row starts at bit c * bits of the row.
std::vector<std::uint32_t> pack(const std::vector<std::uint32_t>& codes, int rows, int cols,
                                int bits) {
  const int words = cols * bits / 32;
  std::vector<std::uint32_t> out(static_cast<std::size_t>(rows * words), 0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      for (int b = 0; b < bits; ++b) {
        const int bit = c * bits + b;
        if ((codes[r * cols + c] >> b) & 1u) out[r * words + bit / 32] |= 1u << (bit % 32);
      }
    }
  }
  return out;
}

// MLX's quantizer: per group, scale = (max - min) / (2^bits - 1), bias = min, both in bf16;
// code = round((w - bias) / scale). `dequantized` gets scale * code + bias.
Quantized quantize(const std::vector<float>& w, int rows, int cols, int bits, int group,
                   std::vector<float>& dequantized) {
  Quantized q;
  std::vector<std::uint32_t> codes(w.size());
  dequantized.resize(w.size());
  const float levels = static_cast<float>((1 << bits) - 1);
  for (int r = 0; r < rows; ++r) {
    for (int g = 0; g < cols / group; ++g) {
      const auto begin = w.begin() + r * cols + g * group;
      const float lo = *std::min_element(begin, begin + group);
      const float hi = *std::max_element(begin, begin + group);
      const float scale = bf16_to_float(float_to_bf16(std::max(hi - lo, 1e-6f) / levels));
      const float bias = bf16_to_float(float_to_bf16(lo));
      q.scales.push_back(float_to_bf16(scale));
      q.biases.push_back(float_to_bf16(bias));
      for (int i = 0; i < group; ++i) {
        const std::size_t at = static_cast<std::size_t>(r * cols + g * group + i);
        const float code = std::clamp(std::round((w[at] - bias) / scale), 0.0f, levels);
        codes[at] = static_cast<std::uint32_t>(code);
        dequantized[at] = scale * code + bias;
      }
    }
  }
  q.words = pack(codes, rows, cols, bits);
  return q;
}

using testing::Tensor;
using testing::write_tensors;

void add_quantized(std::map<std::string, Tensor>& tensors, const std::string& stem,
                   const Quantized& q, int rows, int cols, int bits, int group) {
  tensors[stem + "weight"] = {"U32", {rows, cols * bits / 32}, testing::le_bytes(q.words)};
  tensors[stem + "scales"] = {"BF16", {rows, cols / group}, testing::le_bytes(q.scales)};
  tensors[stem + "biases"] = {"BF16", {rows, cols / group}, testing::le_bytes(q.biases)};
}

TEST(MlxAffine, EveryWidthAndGroupDequantizesToScaleTimesCodePlusBias) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  constexpr int kRows = 3, kCols = 256;
  std::vector<float> w(kRows * kCols);
  for (float& x : w) x = normal(rng);
  for (const int bits : {2, 3, 4, 5, 6, 8}) {
    for (const int group : {32, 64, 128}) {
      testing::TempDir dir;
      std::vector<float> expected;
      const Quantized q = quantize(w, kRows, kCols, bits, group, expected);
      std::map<std::string, Tensor> tensors;
      add_quantized(tensors, "w.", q, kRows, kCols, bits, group);
      write_tensors(dir.path() / "model.safetensors", tensors);
      const ModelWeights weights = ModelWeights::open(dir.path());
      ASSERT_TRUE(is_mlx_affine(weights, "w.weight"));
      for (const WeightFormat format : {WeightFormat::f32, WeightFormat::bf16}) {
        const WeightMatrix m = WeightMatrix::load(weights, "w.weight", kRows, kCols, format);
        std::vector<float> got(kRows * kCols);
        m.rows_to_float(0, kRows, got.data());
        for (std::size_t i = 0; i < got.size(); ++i) {
          // f32 holds scale * code + bias itself; bf16 rounds it (8 bits of mantissa).
          const float tolerance =
              format == WeightFormat::f32 ? 1e-6f : 4e-3f * std::abs(expected[i]) + 1e-7f;
          ASSERT_NEAR(got[i], expected[i], tolerance)
              << bits << " bits, groups of " << group << ", value " << i;
        }
      }
    }
  }
}

TEST(MlxAffine, ShapesThatDoNotFitAreNamed) {
  testing::TempDir dir;
  std::vector<float> w(2 * 64, 0.5f), ignored;
  const Quantized q = quantize(w, 2, 64, 4, 32, ignored);
  std::map<std::string, Tensor> tensors;
  add_quantized(tensors, "w.", q, 2, 64, 4, 32);
  write_tensors(dir.path() / "model.safetensors", tensors);
  const ModelWeights weights = ModelWeights::open(dir.path());
  try {
    WeightMatrix::load(weights, "w.weight", 2, 96, WeightFormat::f32);  // the config's 96
    FAIL() << "loaded";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w.weight' (MLX affine): shapes do not fit a "
                                         "[2 x 96] weight"),
              std::string::npos)
        << e.what();
  }
}

// The reference model with every matrix 8-bit MLX-quantized (groups of 32), against the
// same model with those matrices stored dequantized as f32: the same weights, so the same
// logits up to the order of sums.
TEST(MlxAffine, AQuantizedModelGivesTheLogitsOfItsDequantizedWeights) {
  const fs::path source = fs::path(BATON_TEST_DATA) / "models" / "qwen2";
  std::map<std::string, Tensor> mlx, reference;
  for (const auto& [name, original] : testing::read_tensors(source / "model.safetensors")) {
    ASSERT_EQ(original.dtype, "F32") << name;
    const std::vector<std::int64_t>& shape = original.shape;
    if (shape.size() != 2 || shape[1] % 32 != 0) {  // norms and biases stay as they are
      mlx[name] = reference[name] = original;
      continue;
    }
    const int rows = static_cast<int>(shape[0]), cols = static_cast<int>(shape[1]);
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    std::memcpy(w.data(), original.bytes.data(), w.size() * sizeof(float));
    std::vector<float> dequantized;
    const Quantized q = quantize(w, rows, cols, 8, 32, dequantized);
    add_quantized(mlx, name.substr(0, name.size() - 6), q, rows, cols, 8, 32);
    reference[name] = {"F32", shape, testing::le_bytes(dequantized)};
  }
  testing::TempDir mlx_dir, reference_dir;
  fs::copy_file(source / "config.json", reference_dir.path() / "config.json");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(source / "config.json"));
  config["quantization"] = {{"group_size", 32}, {"bits", 8}};  // as mlx-lm writes it
  std::ofstream(mlx_dir.path() / "config.json") << config.dump(2);
  write_tensors(mlx_dir.path() / "model.safetensors", mlx);
  write_tensors(reference_dir.path() / "model.safetensors", reference);
  {
    const ModelWeights weights = ModelWeights::open(mlx_dir.path());
    for (const char* name : {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight",
                             "model.layers.1.mlp.down_proj.weight"}) {
      EXPECT_TRUE(is_mlx_affine(weights, name)) << name;  // the test quantized them
    }
  }
  ModelLoadOptions f32;
  f32.weights = WeightFormat::f32;
  const LlamaModel quantized = LlamaModel::load(mlx_dir.path(), f32);
  const LlamaModel expected = LlamaModel::load(reference_dir.path(), f32);
  const std::vector<TokenId> tokens = {1, 5, 9, 2, 7, 3};
  KvCache a(quantized.config(), 16), b(expected.config(), 16);
  const std::vector<float> got = forward(quantized, tokens, a);
  const std::vector<float> want = forward(expected, tokens, b);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f) << i;
}

}  // namespace
}  // namespace baton
