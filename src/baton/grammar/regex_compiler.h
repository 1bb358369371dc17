// A regular expression (the subset JSON Schema's `pattern` needs) compiled to a grammar
// expression: literals, classes [...] and [^...], escapes (\d \w \s and their negations,
// \n \t \r \f \v \0, \xHH, \uHHHH, escaped punctuation), `.`, groups ((...), (?:...),
// named), alternation, quantifiers * + ? {m} {m,} {m,n} (lazy forms too: same language),
// and ^ / $ at the start / end of a top-level alternative. Refused with PatternError:
// lookaround, backreferences, \b and other assertions, inline flags, possessive
// quantifiers, \p{...}, groups nested deeper than 64, and counts or sizes past
// grammar_limits.h.
// Where Python's re and ECMAScript differ, the grammar keeps to what both accept: \d \w \s
// are ASCII ([0-9], [A-Za-z0-9_], [ \t\n\r\f\v]), \D \W \S and negated classes holding them
// are ASCII too, and `.` matches neither \r nor U+2028/U+2029.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "baton/grammar/char_class.h"
#include "baton/grammar/grammar.h"

namespace baton::grammar {

class PatternError : public std::invalid_argument {
 public:
  PatternError(const std::string& message, std::size_t offset)
      : std::invalid_argument(message + " at offset " + std::to_string(offset)), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

// full: the whole text must match (Python's re.fullmatch). search: JSON Schema's meaning, a
// match anywhere unless anchored (Python's re.search).
enum class PatternMatch : std::uint8_t { full, search };

// With `grammar`, a class of many alternatives (`.`, [^...] in a JSON string) becomes a rule
// of it, shared by every use, so that `.{300}` costs 300 calls, not 300 copies.
Expr compile_pattern(std::string_view pattern, CharEncoding encoding, PatternMatch match,
                     Grammar* grammar = nullptr);

}  // namespace baton::grammar
