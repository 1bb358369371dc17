// Reading a whole (small) file into memory: configuration, tokenizer and CSV files.
// Thread-safety: a pure function of the file.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace baton {

class FileReadError : public std::runtime_error {
 public:
  FileReadError(const std::filesystem::path& path, std::string reason)
      : std::runtime_error(path.string() + ": cannot read (" + reason + ")"),
        reason_(std::move(reason)) {}
  // Why: "No such file or directory", "it is a directory", "read failed", ...
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// The file's bytes; throws FileReadError.
std::string read_file(const std::filesystem::path& path);

}  // namespace baton
