// Decimal numbers within bounds as grammar expressions (JSON Schema's minimum, maximum and
// their exclusive forms). Integers are exact: every integer in [lo, hi] (at most 18 digits)
// and nothing else. Numbers with a fraction are a sound subset: an integer part i gets a
// fraction (.d, up to 15 digits, no exponent) only where every value from i to the next
// integer lies within the bounds, so values between a non-integer bound and the integer
// next to it are never produced (minimum 0.5: the smallest output is 1).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

// The largest magnitude produced: 18 digits.
inline constexpr std::int64_t kMaxJsonInteger = 999'999'999'999'999'999;

// Every integer in [lo, hi] in JSON's spelling (no leading zeros, no "-0"). An empty
// choice when lo > hi.
Expr integer_range(std::int64_t lo, std::int64_t hi);

struct NumberBounds {
  std::optional<double> min;
  bool exclusive_min = false;
  std::optional<double> max;
  bool exclusive_max = false;
};

// The integers within `bounds` (for "type": "integer"), or nullopt when there are none.
std::optional<std::pair<std::int64_t, std::int64_t>> integer_bounds(const NumberBounds& bounds);
// Numbers within `bounds` as described above; an empty choice when there are none.
Expr bounded_number(const NumberBounds& bounds);

}  // namespace baton::grammar
