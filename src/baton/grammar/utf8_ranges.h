// Unicode code point ranges as UTF-8 byte sequences: the grammar reads bytes, patterns and
// JSON strings speak of characters. Surrogates (U+D800..U+DFFF) are never encoded.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

inline constexpr std::uint32_t kMaxCodePoint = 0x10FFFF;

// One character of [lo, hi] (inclusive), as a choice of byte-range sequences.
Expr utf8_range(std::uint32_t lo, std::uint32_t hi);
// The UTF-8 bytes of one code point.
std::string utf8_encode(std::uint32_t code_point);

}  // namespace baton::grammar
