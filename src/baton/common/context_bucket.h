// The power-of-two bucket of a context length: 0 for none, then the bit width (1 for 1,
// 2 for 2-3, ..., 11 for 1024-2047). Bursts in one bucket cost about the same, which is
// what the slowdown detector's medians and the ledger's interval merging rely on.
// Thread-safety: a pure function.
#pragma once

#include <bit>
#include <cstddef>

namespace baton {

constexpr std::size_t context_bucket(std::size_t tokens) { return std::bit_width(tokens); }

}  // namespace baton
