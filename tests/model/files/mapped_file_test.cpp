#include "baton/model/files/mapped_file.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::TempDir;
using testing::write_file;

std::string text_of(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.bytes().data()), file.size()};
}

TEST(MappedFile, MapsTheWholeFile) {
  const TempDir dir;
  write_file(dir.path() / "f", "hello, map");
  const MappedFile file(dir.path() / "f");
  EXPECT_EQ(text_of(file), "hello, map");
  EXPECT_EQ(file.path().string(), (dir.path() / "f").string());
}

TEST(MappedFile, EmptyFileIsAnEmptySpan) {
  const TempDir dir;
  write_file(dir.path() / "empty", "");
  const MappedFile file(dir.path() / "empty");
  EXPECT_TRUE(file.bytes().empty());
}

TEST(MappedFile, MoveKeepsTheBytesWhereTheyAre) {
  const TempDir dir;
  write_file(dir.path() / "f", "abc");
  MappedFile first(dir.path() / "f");
  const std::byte* data = first.bytes().data();
  MappedFile second(std::move(first));
  EXPECT_TRUE(first.bytes().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(second.bytes().data(), data);
  MappedFile third;
  third = std::move(second);
  EXPECT_EQ(text_of(third), "abc");
}

TEST(MappedFile, MissingFileNamesThePathAndErrno) {
  const TempDir dir;
  const auto missing = dir.path() / "missing.safetensors";
  try {
    const MappedFile file(missing);
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_EQ(std::string(e.what()), missing.string() + ": cannot open: No such file or directory");
  }
}

TEST(MappedFile, DirectoryIsNotARegularFile) {
  const TempDir dir;
  try {
    const MappedFile file(dir.path());
    FAIL() << "no error";
  } catch (const ModelFileError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path().string() + ": not a regular file");
  }
}

}  // namespace
}  // namespace baton
