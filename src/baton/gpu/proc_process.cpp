#include "baton/gpu/proc_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>

#include "baton/common/unique_fd.h"

namespace baton {
namespace {

// The initial PID namespace's inode number, fixed by the kernel (PROC_PID_INIT_INO).
constexpr std::string_view kHostPidNamespace = "pid:[4026531836]";

}  // namespace

std::optional<std::string> process_name(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!in || !std::getline(in, name)) return std::nullopt;
  return name;
}

std::optional<ProcStat> read_proc_stat(std::uint32_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  char text[1024];
  const ssize_t n = ::read(fd.get(), text, sizeof text - 1);
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  // The command name (field 2) may hold spaces and parentheses; it ends at the last ')'.
  const char* p = std::strrchr(text, ')');
  if (p == nullptr || p[1] != ' ') return std::nullopt;
  ProcStat stat;
  p += 2;
  stat.state = *p;
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return std::nullopt;
    ++p;
  }
  stat.start_time = std::strtoull(p, nullptr, 10);
  return stat;
}

bool in_host_pid_namespace() {
  std::array<char, 64> link{};
  const ssize_t n = readlink("/proc/self/ns/pid", link.data(), link.size());
  if (n <= 0) return false;
  return std::string_view(link.data(), static_cast<std::size_t>(n)) == kHostPidNamespace;
}

}  // namespace baton
