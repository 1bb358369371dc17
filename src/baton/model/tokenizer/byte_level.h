// The byte-level alphabet of GPT-2 style BPE: each of the 256 byte values is written as
// one printable Unicode character (bytes that are printable Latin-1 stand for themselves,
// the others are shifted to U+0100 and up), so any byte string, valid UTF-8 or not, is a
// string of vocabulary symbols and comes back exactly.
// Thread-safety: pure functions over constant tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace baton {

// The UTF-8 text of `bytes` in the byte-level alphabet.
std::string to_byte_level(std::string_view bytes);
// The bytes a byte-level text stands for; empty when it holds a character outside the
// alphabet (such a token is not byte-level).
std::optional<std::string> from_byte_level(std::string_view text);

}  // namespace baton
