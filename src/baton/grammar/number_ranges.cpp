#include "baton/grammar/number_ranges.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "baton/grammar/json_grammar.h"

namespace baton::grammar {
namespace {

Expr digits(char lo, char hi) {
  return byte_range(static_cast<unsigned char>(lo), static_cast<unsigned char>(hi));
}

// Every digit string from lo to hi, both of the same length (leading zeros allowed).
Expr same_length(const std::string& lo, const std::string& hi) {
  if (lo.empty()) return empty();
  if (lo[0] == hi[0])
    return sequence(
        {byte_of(static_cast<unsigned char>(lo[0])), same_length(lo.substr(1), hi.substr(1))});
  const std::size_t rest = lo.size() - 1;
  const std::string zeros(rest, '0');
  const std::string nines(rest, '9');
  std::vector<Expr> out;
  char middle_lo = static_cast<char>(lo[0] + 1);
  char middle_hi = static_cast<char>(hi[0] - 1);
  if (lo.substr(1) == zeros) {
    middle_lo = lo[0];
  } else {
    out.push_back(
        sequence({byte_of(static_cast<unsigned char>(lo[0])), same_length(lo.substr(1), nines)}));
  }
  const bool hi_full = hi.substr(1) == nines;
  if (hi_full) middle_hi = hi[0];
  if (middle_lo <= middle_hi)
    out.push_back(sequence(
        {digits(middle_lo, middle_hi), repeat(digits('0', '9'), static_cast<std::uint32_t>(rest),
                                              static_cast<std::uint32_t>(rest))}));
  if (!hi_full)
    out.push_back(
        sequence({byte_of(static_cast<unsigned char>(hi[0])), same_length(zeros, hi.substr(1))}));
  return choice(std::move(out));
}

// Every non-negative integer in [lo, hi], without leading zeros.
Expr unsigned_range(std::int64_t lo, std::int64_t hi) {
  std::vector<Expr> out;
  std::int64_t low_of_length = 0;
  for (std::size_t length = 1; length <= 18 && low_of_length <= hi; ++length) {
    const std::int64_t high_of_length = low_of_length == 0 ? 9 : low_of_length * 10 - 1;
    const std::int64_t a = std::max(lo, low_of_length);
    const std::int64_t b = std::min(hi, high_of_length);
    if (a <= b) out.push_back(same_length(std::to_string(a), std::to_string(b)));
    low_of_length = low_of_length == 0 ? 10 : low_of_length * 10;
  }
  return choice(std::move(out));
}

Expr fraction() {
  return sequence({byte_of('.'), repeat(digits('0', '9'), 1, kMaxFractionDigits)});
}

std::int64_t clamp_integer(double v) {
  if (v <= -static_cast<double>(kMaxJsonInteger)) return -kMaxJsonInteger;
  if (v >= static_cast<double>(kMaxJsonInteger)) return kMaxJsonInteger;
  return static_cast<std::int64_t>(v);
}

}  // namespace

Expr integer_range(std::int64_t lo, std::int64_t hi) {
  lo = std::max(lo, -kMaxJsonInteger);
  hi = std::min(hi, kMaxJsonInteger);
  std::vector<Expr> out;
  if (lo < 0) {
    const std::int64_t neg_hi = std::min<std::int64_t>(hi, -1);
    if (lo <= neg_hi) out.push_back(sequence({byte_of('-'), unsigned_range(-neg_hi, -lo)}));
  }
  if (hi >= 0) {
    const std::int64_t a = std::max<std::int64_t>(lo, 0);
    if (a <= hi) out.push_back(unsigned_range(a, hi));
  }
  return choice(std::move(out));
}

std::optional<std::pair<std::int64_t, std::int64_t>> integer_bounds(const NumberBounds& b) {
  std::int64_t lo = -kMaxJsonInteger;
  std::int64_t hi = kMaxJsonInteger;
  if (b.min)
    lo = std::max(lo, clamp_integer(b.exclusive_min ? std::floor(*b.min) + 1 : std::ceil(*b.min)));
  if (b.max)
    hi = std::min(hi, clamp_integer(b.exclusive_max ? std::ceil(*b.max) - 1 : std::floor(*b.max)));
  if (lo > hi) return std::nullopt;
  return std::pair{lo, hi};
}

Expr bounded_number(const NumberBounds& b) {
  std::vector<Expr> out;
  const auto whole = integer_bounds(b);
  if (whole) out.push_back(integer_range(whole->first, whole->second));
  // i.ddd lies in [i, i+1): it needs i >= the integer bound and i + 1 <= max.
  const double max_or_inf = b.max.value_or(HUGE_VAL);
  const double min_or_inf = b.min.value_or(-HUGE_VAL);
  const std::int64_t positive_lo = std::max<std::int64_t>(
      0, clamp_integer(b.exclusive_min ? std::floor(min_or_inf) + 1 : std::ceil(min_or_inf)));
  const std::int64_t positive_hi = clamp_integer(std::floor(max_or_inf) - 1);
  if (positive_lo <= positive_hi)
    out.push_back(sequence({integer_range(positive_lo, positive_hi), fraction()}));
  // -i.ddd lies in (-(i+1), -i]: it needs -(i+1) >= min and -i <= max (< when exclusive).
  const std::int64_t negative_hi = clamp_integer(std::floor(-min_or_inf) - 1);
  const std::int64_t negative_lo = std::max<std::int64_t>(
      0, clamp_integer(b.exclusive_max ? std::floor(-max_or_inf) + 1 : std::ceil(-max_or_inf)));
  if (negative_lo <= negative_hi)
    out.push_back(sequence({byte_of('-'), integer_range(negative_lo, negative_hi), fraction()}));
  return choice(std::move(out));
}

}  // namespace baton::grammar
