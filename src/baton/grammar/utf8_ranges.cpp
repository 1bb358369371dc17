#include "baton/grammar/utf8_ranges.h"

#include <algorithm>

namespace baton::grammar {
namespace {

constexpr std::uint32_t kLastOfLength[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};

std::size_t encoded_length(std::uint32_t cp) {
  std::size_t n = 1;
  while (cp > kLastOfLength[n - 1]) ++n;
  return n;
}

// [lo, hi] of one encoded length, split until every byte position is a plain range.
void add_same_length(std::uint32_t lo, std::uint32_t hi, std::vector<Expr>& out) {
  const std::size_t n = encoded_length(lo);
  for (std::size_t i = 1; i < n; ++i) {
    const std::uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        add_same_length(lo, lo | m, out);
        add_same_length((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        add_same_length(lo, (hi & ~m) - 1, out);
        add_same_length(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = utf8_encode(lo);
  const std::string b = utf8_encode(hi);
  std::vector<Expr> seq;
  for (std::size_t i = 0; i < a.size(); ++i)
    seq.push_back(byte_range(static_cast<unsigned char>(a[i]), static_cast<unsigned char>(b[i])));
  out.push_back(sequence(std::move(seq)));
}

void add_range(std::uint32_t lo, std::uint32_t hi, std::vector<Expr>& out) {
  if (lo > hi) return;
  if (lo < 0xD800 && hi >= 0xD800) {  // step over the surrogates
    add_range(lo, 0xD7FF, out);
    add_range(0xE000, hi, out);
    return;
  }
  if (lo >= 0xD800 && lo <= 0xDFFF) return add_range(0xE000, hi, out);
  for (const std::uint32_t last : kLastOfLength)
    if (lo <= last && hi > last) {
      add_same_length(lo, last, out);
      return add_range(last + 1, hi, out);
    }
  add_same_length(lo, hi, out);
}

}  // namespace

Expr utf8_range(std::uint32_t lo, std::uint32_t hi) {
  std::vector<Expr> out;
  add_range(lo, std::min(hi, kMaxCodePoint), out);
  return choice(std::move(out));
}

std::string utf8_encode(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

}  // namespace baton::grammar
