#include "baton/gpu/proc_process.h"

#include <unistd.h>

#include <array>
#include <fstream>
#include <string_view>

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

bool in_host_pid_namespace() {
  std::array<char, 64> link{};
  const ssize_t n = readlink("/proc/self/ns/pid", link.data(), link.size());
  if (n <= 0) return false;
  return std::string_view(link.data(), static_cast<std::size_t>(n)) == kHostPidNamespace;
}

}  // namespace baton
