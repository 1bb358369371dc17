// A NaN or an infinity in a weight is refused at load naming the tensor, its row and its
// column (weight_matrix.h, mlx_affine.h), in every way a weight is loaded: bf16 read in
// place (aligned), bf16 copied (misaligned), bf16 read in place for an upload, widened to
// f32, quantized to q8; an MLX weight's scales; a norm vector; and a whole model.
#include <gtest/gtest.h>

#include <limits>

#include "baton/model/files/half.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/llama_model.h"
#include "baton/model/weights/weight_matrix.h"
#include "baton/model/writer/model_writer.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

namespace fs = std::filesystem;
using testing::Tensor;

constexpr int kRows = 4, kCols = 64;

// A bf16 [4 x 64] tensor "w" of ones with `bad` at row 1, column 3, in a file whose data
// starts `misalign` bytes past a 64-byte boundary (the header padded with spaces).
void write_weight(const fs::path& file, std::uint16_t bad, std::size_t misalign) {
  std::vector<std::uint16_t> values(kRows * kCols, float_to_bf16(1.0f));
  values[1 * kCols + 3] = bad;
  const std::string data = testing::le_bytes(values);
  std::string header = nlohmann::json{{"w", {{"dtype", "BF16"},
                                             {"shape", {kRows, kCols}},
                                             {"data_offsets", {0, data.size()}}}}}
                           .dump();
  while ((8 + header.size()) % 64 != misalign) header += ' ';
  testing::write_file(file, testing::safetensors_bytes(header, data));
}

std::string load_error(const fs::path& dir, WeightFormat format, WeightUse use) {
  const ModelWeights weights = ModelWeights::open(dir);
  try {
    WeightMatrix::load(weights, "w", kRows, kCols, format, use);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "loaded";
}

TEST(NonfiniteWeights, ABf16MatrixWithANanOrAnInfinityIsRefusedNamingWhere) {
  const std::uint16_t nan = 0x7fc0, inf = 0x7f80, minus_inf = 0xff80;
  for (const std::uint16_t bad : {nan, inf, minus_inf}) {
    for (const std::size_t misalign : {std::size_t{0}, std::size_t{8}}) {
      const testing::TempDir dir;
      write_weight(dir.path() / "model.safetensors", bad, misalign);
      for (const WeightFormat format : {WeightFormat::bf16, WeightFormat::f32, WeightFormat::q8}) {
        for (const WeightUse use : {WeightUse::cpu_kernels, WeightUse::upload}) {
          const std::string error = load_error(dir.path(), format, use);
          EXPECT_NE(error.find("tensor 'w'"), std::string::npos) << error;
          EXPECT_NE(error.find("infinity or a NaN"), std::string::npos) << error;
          EXPECT_NE(error.find("(row 1, column 3)"), std::string::npos)
              << std::hex << bad << " misaligned by " << misalign << ": " << error;
        }
      }
    }
  }
}

TEST(NonfiniteWeights, FiniteExtremesLoad) {
  const std::uint16_t largest = 0x7f7f, smallest_subnormal = 0x0001;
  for (const std::uint16_t value : {largest, smallest_subnormal}) {
    const testing::TempDir dir;
    write_weight(dir.path() / "model.safetensors", value, 8);
    EXPECT_EQ(load_error(dir.path(), WeightFormat::bf16, WeightUse::cpu_kernels), "loaded");
    EXPECT_EQ(load_error(dir.path(), WeightFormat::f32, WeightUse::cpu_kernels), "loaded");
  }
}

TEST(NonfiniteWeights, AnMlxScaleThatIsInfiniteIsRefusedNamingTheScales) {
  const testing::TempDir dir;
  std::map<std::string, Tensor> tensors;
  const int groups = kCols / 32;
  std::vector<std::uint16_t> scales(kRows * groups, float_to_bf16(0.01f));
  std::vector<std::uint16_t> biases(kRows * groups, float_to_bf16(-0.5f));
  scales[3] = 0x7f80;  // +inf
  tensors["w.weight"] = {"U32", {kRows, kCols * 4 / 32},
                         testing::le_bytes(std::vector<std::uint32_t>(kRows * kCols / 8, 0))};
  tensors["w.scales"] = {"BF16", {kRows, groups}, testing::le_bytes(scales)};
  tensors["w.biases"] = {"BF16", {kRows, groups}, testing::le_bytes(biases)};
  testing::write_tensors(dir.path() / "model.safetensors", tensors);
  const ModelWeights weights = ModelWeights::open(dir.path());
  for (const WeightFormat format : {WeightFormat::bf16, WeightFormat::f32, WeightFormat::q8}) {
    try {
      WeightMatrix::load(weights, "w.weight", kRows, kCols, format);
      ADD_FAILURE() << "loaded";
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 'w.scales' (MLX affine): holds an infinity "
                                           "or a NaN (element 3)"),
                std::string::npos)
          << e.what();
    }
  }
}

// A whole generated model with one NaN in a layer's matrix, then one in a norm.
TEST(NonfiniteWeights, AModelWithANanIsRefusedNamingTheTensor) {
  for (const std::string target :
       {"model.layers.1.mlp.down_proj.weight", "model.layers.0.input_layernorm.weight"}) {
    const testing::TempDir dir;
    write_model(dir.path(), ModelArch::qwen2, model_shape("tiny", ModelArch::qwen2), 3);
    const fs::path file = dir.path() / "model.safetensors";
    auto tensors = testing::read_tensors(file);
    ASSERT_EQ(tensors.at(target).dtype, "BF16");
    const std::uint16_t nan = 0x7fc0;
    std::memcpy(tensors.at(target).bytes.data() + 2 * 5, &nan, 2);  // element 5
    testing::write_tensors(file, tensors);
    try {
      LlamaModel::load(dir.path());
      ADD_FAILURE() << target << " loaded";
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find("tensor '" + target + "' holds an infinity or a NaN"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace baton
