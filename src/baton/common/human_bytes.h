// human_bytes: "1.2 GiB", "512 B", for sizes in messages and progress lines.
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

namespace baton {

std::string human_bytes(std::uint64_t bytes);

}  // namespace baton
