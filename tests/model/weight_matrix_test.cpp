#include "baton/model/weights/weight_matrix.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

bool aligned64(const std::byte* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

// A model directory holding one bf16 tensor "w" of [rows x cols] whose data starts
// `misalign` bytes past a 64-byte boundary of the file (the header is padded with spaces,
// as JSON allows), and its bf16 values.
std::vector<std::uint16_t> write_bf16(const testing::TempDir& dir, int rows, int cols,
                                      int misalign) {
  std::vector<std::uint16_t> w(static_cast<std::size_t>(rows) * cols);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint16_t>(0x3f80 + i % 97);
  std::string header = R"({"w": {"dtype": "BF16", "shape": [)" + std::to_string(rows) + ", " +
                       std::to_string(cols) + R"(], "data_offsets": [0, )" +
                       std::to_string(w.size() * 2) + "]}}";
  while ((8 + header.size()) % 64 != static_cast<std::size_t>(misalign)) header += ' ';
  testing::write_file(dir.path() / "model.safetensors",
                      testing::safetensors_bytes(header, testing::le_bytes(w)));
  return w;
}

// Safetensors files align tensors to 8 bytes only: such a tensor is copied to a 64-byte
// boundary (the kernels' loads would straddle cache lines), one that is aligned is read
// in place; the values are the file's either way. 1100 x 1024 bf16 is over 2 MiB (the
// copy then asks for huge pages).
TEST(WeightMatrix, Bf16RowsAre64ByteAlignedAndReadInPlaceWhenTheFileAlignsThem) {
  for (const int misalign : {0, 8, 32}) {
    for (const auto& [rows, cols] : {std::pair{3, 40}, {1100, 1024}}) {
      testing::TempDir dir;
      const std::vector<std::uint16_t> w = write_bf16(dir, rows, cols, misalign);
      const ModelWeights weights = ModelWeights::open(dir.path());
      const WeightMatrix m = WeightMatrix::load(weights, "w", rows, cols, WeightFormat::bf16);
      ASSERT_TRUE(m.is_bf16());
      EXPECT_TRUE(aligned64(m.bf16_data())) << "misalign " << misalign;
      EXPECT_EQ(m.bf16_data() == weights.at("w").bytes.data(), misalign == 0)
          << "misalign " << misalign;
      EXPECT_EQ(m.bytes(), w.size() * 2);
      EXPECT_EQ(std::memcmp(m.bf16_data(), w.data(), w.size() * 2), 0) << "misalign " << misalign;
      std::vector<float> row(static_cast<std::size_t>(cols));
      m.rows_to_float(rows - 1, 1, row.data());
      const std::uint32_t bits = static_cast<std::uint32_t>(w[w.size() - 1]) << 16;
      float last;
      std::memcpy(&last, &bits, sizeof last);
      EXPECT_EQ(row.back(), last);
    }
  }
}

}  // namespace
}  // namespace baton
