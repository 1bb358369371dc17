#include "baton/gpu/nvidia_driver.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

namespace baton {

namespace {

// "580.159.04": digits and dots, starting with a digit, with at least one dot.
bool is_version(std::string_view word) {
  if (word.empty() || !std::isdigit(static_cast<unsigned char>(word.front()))) return false;
  bool dot = false;
  for (const char c : word) {
    if (c == '.') {
      dot = true;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return dot;
}

}  // namespace

std::string nvidia_driver_version(std::string_view proc_text) {
  // The first line names the module's version after "Kernel Module" (the open modules write
  // "Open Kernel Module for x86_64  570.86.15"): its first word that is a version.
  const std::string_view marker = "Kernel Module";
  const std::size_t at = proc_text.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = proc_text.substr(at + marker.size());
  rest = rest.substr(0, rest.find('\n'));
  while (!rest.empty()) {
    const std::size_t begin = rest.find_first_not_of(" \t");
    if (begin == std::string_view::npos) break;
    rest = rest.substr(begin);
    const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
    if (is_version(rest.substr(0, end))) return std::string(rest.substr(0, end));
    rest = rest.substr(end);
  }
  return {};
}

std::string installed_nvidia_driver() {
  std::ifstream in("/proc/driver/nvidia/version");
  if (!in) return {};
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return nvidia_driver_version(text);
}

}  // namespace baton
