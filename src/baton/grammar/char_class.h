// A set of Unicode code points (sorted, merged ranges), as a pattern's classes need, and
// its grammar: one character of the set, either as raw UTF-8 or as the content of a JSON
// string (each character in one canonical spelling: `"` and `\` escaped, control characters
// as \b \f \n \r \t or \u00xx, everything else as itself).
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

enum class CharEncoding : std::uint8_t { raw_utf8, json_string };

class CharClass {
 public:
  void add(std::uint32_t lo, std::uint32_t hi);
  void add(const CharClass& other);
  // Every code point (surrogates aside) not in the set, up to `limit`.
  CharClass complement(std::uint32_t limit) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& ranges() const { return ranges_; }
  Expr to_expr(CharEncoding encoding) const;

  static CharClass digits();            // [0-9]
  static CharClass word();              // [A-Za-z0-9_]
  static CharClass space();             // [ \t\n\r\f\v]
  static CharClass any_but_newlines();  // Python's and ECMAScript's `.` both match these

 private:
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges_;  // sorted, disjoint
};

}  // namespace baton::grammar
