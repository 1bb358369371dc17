#include "baton/model/tokenizer/byte_level.h"

#include <array>
#include <cstdint>

namespace baton {
namespace {

// byte -> code point: printable ranges '!'..'~', '¡'..'¬', '®'..'ÿ' map to themselves,
// the remaining 68 bytes to U+0100, U+0101, ... in byte order.
constexpr std::array<char32_t, 256> make_table() {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

constexpr std::array<char32_t, 256> kByteToChar = make_table();

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else {  // every code point of the alphabet is below U+0800: two bytes
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

}  // namespace

std::string to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) append_utf8(out, kByteToChar[b]);
  return out;
}

std::optional<std::string> from_byte_level(std::string_view text) {
  static constexpr auto kCharToByte = [] {
    std::array<int, 0x200> table{};
    table.fill(-1);
    for (int b = 0; b < 256; ++b) table[kByteToChar[b]] = b;
    return table;
  }();
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    char32_t c = 0;
    if (lead < 0x80) {
      c = lead;
      i += 1;
    } else if ((lead & 0xe0) == 0xc0 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xc0) == 0x80) {
      c = (char32_t{lead & 0x1fu} << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3fu);
      i += 2;
    } else {
      return std::nullopt;
    }
    if (c >= kCharToByte.size() || kCharToByte[c] < 0) return std::nullopt;
    out += static_cast<char>(kCharToByte[c]);
  }
  return out;
}

}  // namespace baton
