// Giving a weight's host copy back once a device holds it (weight_buffer.h, Q8Matrix,
// WeightMatrix::release_host_copy): a buffer of 2 MiB or more gives back its whole mapped
// range (RssAnon drops by it) and stays reserved PROT_NONE, so that its owner's munmap is
// still valid and a read would fault; a smaller one, and a matrix read in place from the
// memory map, give back nothing. No test reads a buffer after its release (it would fault).
#include "baton/model/weights/weight_buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baton/model/weights/q8_matrix.h"
#include "baton/model/weights/weight_matrix.h"
#include "model/safetensors_writer.h"
#include "process_memory.h"
#include "temp_dir.h"

namespace baton {
namespace weight_buffer_test {
namespace {

using testing::kSanitized;
using testing::rss_anon_bytes;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t page_rounded(std::size_t n) {
  return (n + page_size() - 1) / page_size() * page_size();
}

// The permissions /proc/self/maps gives the map holding address `at` ("" when none does).
std::string map_permissions(std::uintptr_t at) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, permissions;
    fields >> range >> permissions;
    const std::size_t dash = range.find('-');
    const std::uintptr_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (start <= at && at < end) return permissions;
  }
  return "";
}

TEST(WeightBuffer, ASmallBufferIsNotReleasedAndStaysReadable) {
  const std::shared_ptr<std::byte> buffer = allocate_weight_buffer(kMiB);
  std::memset(buffer.get(), 7, kMiB);
  EXPECT_EQ(weight_buffer_mapped_bytes(buffer), 0u);
  EXPECT_EQ(release_weight_buffer(buffer), 0u);
  EXPECT_EQ(buffer.get()[kMiB - 1], std::byte{7});
  EXPECT_EQ(release_weight_buffer(nullptr), 0u);
}

TEST(WeightBuffer, AMappedBufferGivesItsPagesBackAndStaysReserved) {
  const std::size_t bytes = 3 * kMiB + 100;  // ends inside a page: the release covers it
  std::shared_ptr<std::byte> buffer = allocate_weight_buffer(bytes);
  EXPECT_EQ(weight_buffer_mapped_bytes(buffer), page_rounded(bytes));
  std::memset(buffer.get(), 1, bytes);  // every page resident
  const std::size_t before = rss_anon_bytes();
  const std::size_t released = release_weight_buffer(buffer);
  const std::size_t after = rss_anon_bytes();
  EXPECT_EQ(released, page_rounded(bytes));
  const auto first = reinterpret_cast<std::uintptr_t>(buffer.get());
  const std::uintptr_t last = first + released - 1;
  EXPECT_EQ(map_permissions(first), "---p");  // reserved: a read faults
  EXPECT_EQ(map_permissions(last), "---p");
  if (!kSanitized) {
    EXPECT_GE(before - std::min(before, after), released * 9 / 10)
        << "RssAnon " << before / 1024 << " KiB before, " << after / 1024 << " KiB after";
  }
  buffer.reset();  // its munmap takes the reservation (a sanitizer may map there again)
  if (!kSanitized) {
    EXPECT_EQ(map_permissions(first), "");
    EXPECT_EQ(map_permissions(last), "");
  }
}

TEST(Q8Matrix, ALargeMatrixStartsAtZeroAndGivesBackItsArraysOf2MiBOrMore) {
  // 4096 x 1024: values 4 MiB (released), scales 4096 x 32 f32 = 512 KiB (kept).
  const int rows = 4096, cols = 1024;
  Q8Matrix q(rows, cols);
  EXPECT_EQ(q.row_values(rows - 1)[cols - 1], 0);  // a fresh map is zeroed
  EXPECT_EQ(q.row_scales(rows - 1)[q.groups() - 1], 0.0f);
  const std::vector<float> source(static_cast<std::size_t>(rows) * cols, 0.5f);
  q.quantize_rows(0, rows, source.data());
  const std::size_t values = static_cast<std::size_t>(rows) * q.stride();
  EXPECT_EQ(q.releasable_bytes(), values);
  EXPECT_EQ(q.release_host_copy(), page_rounded(values));
  EXPECT_EQ(q.rows(), rows);  // the shape stays readable
  EXPECT_EQ(q.bytes(), values + static_cast<std::size_t>(rows) * q.groups() * sizeof(float));
}

TEST(Q8Matrix, ASmallMatrixGivesNothingBack) {
  Q8Matrix q(64, 256);
  EXPECT_EQ(q.releasable_bytes(), 0u);
  EXPECT_EQ(q.release_host_copy(), 0u);
  EXPECT_EQ(q.row_values(63)[255], 0);  // still readable
}

// One bf16 tensor "w" [rows x cols] whose data starts `misalign` bytes past a 64-byte
// boundary of the file (as in weight_matrix_test.cpp).
void write_bf16(const testing::TempDir& dir, int rows, int cols, int misalign) {
  std::vector<std::uint16_t> w(static_cast<std::size_t>(rows) * cols, 0x3f80);
  std::string header = R"({"w": {"dtype": "BF16", "shape": [)" + std::to_string(rows) + ", " +
                       std::to_string(cols) + R"(], "data_offsets": [0, )" +
                       std::to_string(w.size() * 2) + "]}}";
  while ((8 + header.size()) % 64 != static_cast<std::size_t>(misalign)) header += ' ';
  testing::write_file(dir.path() / "model.safetensors",
                      testing::safetensors_bytes(header, testing::le_bytes(w)));
}

// A misaligned bf16 tensor is copied (its copy given back); an aligned one is read in place
// from the memory map, which release_host_copy() never touches. 1100 x 1024 bf16: 2.2 MB.
TEST(WeightMatrix, ReleaseHostCopyGivesBackACopyButNeverTheMap) {
  const int rows = 1100, cols = 1024;
  const std::size_t bytes = static_cast<std::size_t>(rows) * cols * 2;
  for (const int misalign : {0, 8}) {
    const testing::TempDir dir;
    write_bf16(dir, rows, cols, misalign);
    const ModelWeights weights = ModelWeights::open(dir.path());
    WeightMatrix m = WeightMatrix::load(weights, "w", rows, cols, WeightFormat::bf16);
    const bool copied = misalign != 0;
    ASSERT_EQ(m.in_map(), !copied);
    EXPECT_EQ(m.releasable_bytes(), copied ? bytes : 0u);
    EXPECT_EQ(m.release_host_copy(), copied ? page_rounded(bytes) : 0u);
    EXPECT_EQ(m.bytes(), bytes);  // the members stay
    EXPECT_EQ(m.format(), WeightFormat::bf16);
    if (!copied) {
      std::vector<float> row(static_cast<std::size_t>(cols));
      m.rows_to_float(rows - 1, 1, row.data());  // the map's pages are still there
      EXPECT_EQ(row.back(), 1.0f);
    }
  }
}

}  // namespace
}  // namespace weight_buffer_test
}  // namespace baton
