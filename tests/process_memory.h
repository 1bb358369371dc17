// What the memory tests read of the process itself: its resident memory from /proc, and
// whether a sanitizer runs (its allocator keeps freed memory and maps shadow memory beside
// every page, so RSS then measures the sanitizer, not the code under test).
// Thread-safety: plain functions; /proc reads are atomic per call.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace baton::testing {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The process's resident memory (/proc/self/statm), in bytes.
inline std::uint64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// The process's anonymous resident memory (/proc/self/status, RssAnon), in bytes.
inline std::size_t rss_anon_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon:", 0) != 0) continue;
    std::istringstream fields(line.substr(8));
    std::size_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

}  // namespace baton::testing
