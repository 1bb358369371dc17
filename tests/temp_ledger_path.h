// A fresh ledger file name in the test temp directory, removed (with its WAL files) when
// the test ends. Unique per process and per object.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace baton::testing {

class TempLedgerPath {
 public:
  TempLedgerPath()
      : path_(std::filesystem::temp_directory_path() /
              ("baton-ledger-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) +
               ".db")) {
    remove();
  }
  ~TempLedgerPath() { remove(); }
  TempLedgerPath(const TempLedgerPath&) = delete;
  TempLedgerPath& operator=(const TempLedgerPath&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }
  static inline std::atomic<int> counter_{0};
  std::filesystem::path path_;
};

}  // namespace baton::testing
