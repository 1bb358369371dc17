// Integer ranges against arithmetic: for many random bounds, every integer from -1200 to
// 1200 (and some 18-digit ones) is accepted exactly when it lies within them; numbers with
// a fraction are accepted only within the bounds (the sound subset of number_ranges.h).
#include "baton/grammar/number_ranges.h"

#include <gtest/gtest.h>

#include <random>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar_matcher.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::number_ranges_test {
namespace {

bool accepts(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  GrammarMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

TEST(NumberRanges, IntegersExactlyWithinBounds) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<std::int64_t> bound(-1100, 1100);
  for (int round = 0; round < 60; ++round) {
    std::int64_t lo = bound(rng);
    std::int64_t hi = bound(rng);
    if (round % 7 == 0) hi = lo;
    if (lo > hi) std::swap(lo, hi);
    const auto g = CompiledGrammar::compile_expr(Grammar{}, integer_range(lo, hi));
    for (std::int64_t v = -1200; v <= 1200; ++v)
      ASSERT_EQ(accepts(g, std::to_string(v)), lo <= v && v <= hi)
          << v << " in [" << lo << ", " << hi << "]";
    EXPECT_FALSE(accepts(g, "-0"));
    EXPECT_FALSE(accepts(g, "007"));
  }
}

TEST(NumberRanges, EighteenDigitBounds) {
  const auto g =
      CompiledGrammar::compile_expr(Grammar{}, integer_range(-kMaxJsonInteger, 123456789012345678));
  EXPECT_TRUE(accepts(g, "-999999999999999999"));
  EXPECT_TRUE(accepts(g, "123456789012345678"));
  EXPECT_FALSE(accepts(g, "123456789012345679"));
  EXPECT_FALSE(accepts(g, "-1000000000000000000"));
}

TEST(NumberRanges, FractionsOnlyWithinBounds) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> bound(-30, 30);
  for (int round = 0; round < 40; ++round) {
    NumberBounds b{.min = bound(rng),
                   .exclusive_min = round % 2 == 0,
                   .max = bound(rng),
                   .exclusive_max = round % 3 == 0};
    if (*b.min > *b.max) std::swap(b.min, b.max);
    if (round % 5 == 0) b.min.reset();
    const auto g = CompiledGrammar::compile_expr(Grammar{}, bounded_number(b));
    int accepted = 0;
    for (int tenths = -350; tenths <= 350; ++tenths) {
      const double v = tenths / 10.0;
      char text[32];
      std::snprintf(text, sizeof text, "%s%d.%d", v < 0 ? "-" : "", std::abs(tenths) / 10,
                    std::abs(tenths) % 10);
      const bool within = (!b.min || (b.exclusive_min ? v > *b.min : v >= *b.min)) &&
                          (b.exclusive_max ? v < *b.max : v <= *b.max);
      if (accepts(g, text)) {
        ++accepted;
        EXPECT_TRUE(within) << text;
      }
    }
    if (*b.max - b.min.value_or(-100) > 2.5) {
      EXPECT_GT(accepted, 0);
    }
  }
}

}  // namespace
}  // namespace baton::grammar::number_ranges_test
