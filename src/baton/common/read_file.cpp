#include "baton/common/read_file.h"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

namespace baton {

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FileReadError(path, "it is a directory");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw FileReadError(path, errno != 0 ? std::generic_category().message(errno) : "open failed");
  }
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw FileReadError(path, "read failed");
  return text;
}

}  // namespace baton
