// A count with its noun in the number it takes: "1 hang", "3 hangs", "0 hangs".
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

inline std::string count_of(std::int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace baton
