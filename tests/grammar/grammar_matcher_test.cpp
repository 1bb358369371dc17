// GrammarMatcher over hand-built grammars: prefixes, ends, refusals leave the state as it
// was, rollback, and the token mask equal to the brute-force answer (every token fed to a
// fresh copy of the matcher) in many states of a JSON grammar.
#include "baton/grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <random>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/json_grammar.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::grammar_matcher_test {
namespace {

std::shared_ptr<const CompiledGrammar> json_value_grammar() {
  Grammar g;
  JsonGrammar json(g);
  const Expr value = json.value();
  return CompiledGrammar::compile_expr(g, value);
}

bool matches(const std::shared_ptr<const CompiledGrammar>& grammar, std::string_view text) {
  GrammarMatcher m(grammar);
  return m.accept_bytes(text) && m.can_end();
}

TEST(GrammarMatcher, LiteralPrefixesAndEnd) {
  Grammar g;
  const auto grammar = CompiledGrammar::compile_expr(g, literal("abc"));
  GrammarMatcher m(grammar);
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.accept_bytes("b"));
  EXPECT_TRUE(m.accept_bytes("ab"));
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.accept_bytes("cd"));  // refused whole: "c" is not read either
  EXPECT_TRUE(m.accept_bytes("c"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.finished());
  EXPECT_FALSE(m.accept_bytes("x"));
}

TEST(GrammarMatcher, JsonValuesAcceptedAndRefused) {
  const auto grammar = json_value_grammar();
  for (const char* good :
       {"{}", "[]", "null", "true", "-0.5e+10", "\"a\\u00e9\\n\"",
        "{\"a\": [1, 2, {\"b\": null}], \"c\": \"\xc3\xa9\"}", "[ 1 ,\n 2 ]", "\"\\ud7ff\"", "0"})
    EXPECT_TRUE(matches(grammar, good)) << good;
  for (const char* bad : {"{", "[1,]", "01", "\"\\ud800\"", "\"\xc3\"", "\"\x01\"", "tru",
                          "{\"a\" 1}", "1.", "--1", "\"\xed\xa0\x80\"", "{} {}"})
    EXPECT_FALSE(matches(grammar, bad)) << bad;
}

TEST(GrammarMatcher, WhitespaceIsBounded) {
  Grammar g;
  JsonGrammar json(g, JsonLayout{.max_whitespace = 4});
  const Expr value = json.value();
  const auto grammar = CompiledGrammar::compile_expr(g, value);
  EXPECT_TRUE(matches(grammar, "[    1]"));
  EXPECT_FALSE(matches(grammar, "[     1]"));
}

TEST(GrammarMatcher, RollbackRestoresTheState) {
  const auto grammar = json_value_grammar();
  GrammarMatcher m(grammar);
  ASSERT_TRUE(m.accept_bytes("[1"));
  ASSERT_TRUE(m.accept_bytes(", 2"));
  ASSERT_TRUE(m.accept_bytes("]"));
  EXPECT_TRUE(m.can_end());
  m.rollback(2);
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.accept_bytes("}"));
  EXPECT_TRUE(m.accept_bytes("]"));
  EXPECT_TRUE(m.can_end());
  EXPECT_THROW(m.rollback(5), std::invalid_argument);
}

TEST(GrammarMatcher, LeftRecursionIsRefused) {
  Grammar g;
  const RuleId a = g.declare("a");
  g.define(a, choice({sequence({ref(a), literal("x")}), literal("y")}));
  EXPECT_THROW(CompiledGrammar::compile(g, a), GrammarError);
  Grammar nullable;
  const RuleId n = nullable.add_rule("n", optional(literal("z")));
  const RuleId b = nullable.declare("b");
  nullable.define(b, choice({sequence({ref(n), ref(b), literal("x")}), literal("y")}));
  EXPECT_THROW(CompiledGrammar::compile(nullable, b), GrammarError);
}

TEST(GrammarMatcher, NullableLoopsTerminate) {
  Grammar g;
  const RuleId n = g.add_rule("n", optional(literal("z")));
  const auto grammar = CompiledGrammar::compile_expr(g, sequence({star(ref(n)), literal("!")}));
  EXPECT_TRUE(matches(grammar, "zz!"));
  EXPECT_TRUE(matches(grammar, "!"));
  EXPECT_FALSE(matches(grammar, "z"));
}

TEST(GrammarMatcher, MaskEqualsBruteForceInManyStates) {
  const auto vocabulary = testing::test_vocabulary();
  const auto grammar = json_value_grammar();
  MaskCache cache(grammar, vocabulary);
  std::mt19937 rng(7);
  std::vector<std::uint32_t> mask(vocabulary->mask_words());
  int states = 0;
  for (int walk = 0; walk < 12; ++walk) {
    GrammarMatcher m(grammar);
    for (int step = 0; step < 30 && !m.finished(); ++step) {
      m.fill_mask(cache, mask);
      ASSERT_EQ(mask, testing::brute_force_mask(m, *vocabulary))
          << "walk " << walk << " step " << step;
      ++states;
      std::vector<TokenIndex> allowed;
      for (TokenIndex t = 0; t < vocabulary->size(); ++t)
        if (testing::mask_bit(mask, t) && !vocabulary->is_end_of_sequence(t)) allowed.push_back(t);
      if (allowed.empty()) break;
      ASSERT_TRUE(m.accept_token(allowed[rng() % allowed.size()], *vocabulary));
    }
  }
  EXPECT_GT(states, 100);
}

TEST(GrammarMatcher, EndOfSequenceOnlyWhereTheGrammarCanEnd) {
  const auto vocabulary = testing::test_vocabulary();
  const TokenIndex eos = vocabulary->end_of_sequence()[0];
  const auto grammar = json_value_grammar();
  MaskCache cache(grammar, vocabulary);
  std::vector<std::uint32_t> mask(vocabulary->mask_words());
  GrammarMatcher m(grammar);
  ASSERT_TRUE(m.accept_bytes("[1"));
  m.fill_mask(cache, mask);
  EXPECT_FALSE(testing::mask_bit(mask, eos));
  EXPECT_FALSE(m.accept_token(eos, *vocabulary));
  ASSERT_TRUE(m.accept_bytes("]"));
  m.fill_mask(cache, mask);
  EXPECT_TRUE(testing::mask_bit(mask, eos));
  EXPECT_TRUE(m.accept_token(eos, *vocabulary));
  EXPECT_TRUE(m.finished());
  m.fill_mask(cache, mask);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), 0u), static_cast<long>(mask.size()));
  std::vector<std::uint32_t> short_mask(3);
  EXPECT_THROW(m.fill_mask(cache, short_mask), std::invalid_argument);
}

}  // namespace
}  // namespace baton::grammar::grammar_matcher_test
