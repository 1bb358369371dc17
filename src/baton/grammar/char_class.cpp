#include "baton/grammar/char_class.h"

#include <algorithm>
#include <cstdio>

#include "baton/grammar/utf8_ranges.h"

namespace baton::grammar {

void CharClass::add(std::uint32_t lo, std::uint32_t hi) {
  if (lo > hi) return;
  ranges_.emplace_back(lo, hi);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

void CharClass::add(const CharClass& other) {
  for (const auto& [lo, hi] : other.ranges_) add(lo, hi);
}

CharClass CharClass::complement(std::uint32_t limit) const {
  CharClass out;
  std::uint32_t next = 0;
  for (const auto& [lo, hi] : ranges_) {
    if (lo > next) out.add(next, std::min(lo - 1, limit));
    next = hi + 1;
  }
  if (next <= limit) out.add(next, limit);
  return out;
}

CharClass CharClass::digits() {
  CharClass c;
  c.add('0', '9');
  return c;
}

CharClass CharClass::word() {
  CharClass c = digits();
  c.add('A', 'Z');
  c.add('a', 'z');
  c.add('_', '_');
  return c;
}

CharClass CharClass::space() {
  CharClass c;
  c.add('\t', '\r');  // \t \n \v \f \r
  c.add(' ', ' ');
  return c;
}

CharClass CharClass::any_but_newlines() {
  CharClass newlines;
  newlines.add('\n', '\n');
  newlines.add('\r', '\r');
  newlines.add(0x2028, 0x2029);
  return newlines.complement(kMaxCodePoint);
}

namespace {

std::string json_escape(std::uint32_t c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default: {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      return escaped;
    }
  }
}

}  // namespace

Expr CharClass::to_expr(CharEncoding encoding) const {
  ByteSet plain;
  std::vector<Expr> alternatives;
  for (const auto& [lo, hi] : ranges_) {
    for (std::uint32_t c = lo; c <= std::min<std::uint32_t>(hi, 0x7F); ++c) {
      const bool escaped =
          encoding == CharEncoding::json_string && (c < 0x20 || c == '"' || c == '\\');
      if (escaped)
        alternatives.push_back(literal(json_escape(c)));
      else
        plain.set(c);
    }
    if (hi >= 0x80) alternatives.push_back(utf8_range(std::max<std::uint32_t>(lo, 0x80), hi));
  }
  if (plain.any()) alternatives.push_back(bytes(plain));
  return choice(std::move(alternatives));
}

}  // namespace baton::grammar
