// The automata of leaf rules kept between compiles (rule_dfa_cache.h), and the stack-free
// walk of their states (walk_leaf_rule): a grammar compiled with the cache is the grammar
// compiled without it, state for state and mask for mask; the size bounds refuse the same
// grammars with the same errors; the leaf walk gives the stack walk's tokens and rule ends.
#include "baton/grammar/rule_dfa_cache.h"

#include <gtest/gtest.h>

#include <random>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/json_schema.h"
#include "baton/grammar/mask_walk.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::rule_dfa_cache_test {
namespace {

using Json = nlohmann::ordered_json;

// An object whose property names are new for each `variant`, its values the same types.
Json schema_named(int variant) {
  const std::string p = "p" + std::to_string(variant) + "_";
  return Json::parse(R"({"type": "object", "properties": {")" + p + R"(s": {"type": "string",
      "maxLength": 12}, ")" +
                     p + R"(n": {"type": "integer", "minimum": -5, "maximum": 900},
      ")" + p + R"(e": {"enum": ["x", "yz"]}}, "required": [")" +
                     p + R"(s"]})");
}

std::shared_ptr<const CompiledGrammar> compile(const Json& schema, RuleDfaCache* cache) {
  Grammar grammar;
  Expr value = json_schema_value(grammar, schema, {.max_whitespace = 1});
  return CompiledGrammar::compile_expr(std::move(grammar), std::move(value), cache);
}

TEST(RuleDfaCache, ASecondSchemaReusesTheLeafAutomataAndMatchesAlike) {
  const auto vocabulary = testing::test_vocabulary();
  RuleDfaCache cache;
  (void)compile(schema_named(1), &cache);
  const std::size_t leaves = cache.size();
  EXPECT_GE(leaves, 3u);  // the string, the integer, the enum
  const auto cached = compile(schema_named(2), &cache);
  EXPECT_EQ(cache.size(), leaves);  // nothing new but the object around them
  const auto fresh = compile(schema_named(2), nullptr);
  ASSERT_EQ(cached->state_count(), fresh->state_count());
  MaskCache cached_masks(cached, vocabulary);
  MaskCache fresh_masks(fresh, vocabulary);
  std::mt19937 rng(3);
  std::vector<std::uint32_t> a(vocabulary->mask_words()), b(a.size());
  for (int walk = 0; walk < 8; ++walk) {
    GrammarMatcher with_cache(cached);
    GrammarMatcher without(fresh);
    for (int step = 0; step < 40 && !with_cache.finished(); ++step) {
      with_cache.fill_mask(cached_masks, a);
      without.fill_mask(fresh_masks, b);
      ASSERT_EQ(a, b) << "walk " << walk << " step " << step;
      ASSERT_EQ(a, testing::brute_force_mask(with_cache, *vocabulary));
      std::vector<TokenIndex> allowed;
      for (TokenIndex t = 0; t < vocabulary->size(); ++t)
        if (testing::mask_bit(a, t) && !vocabulary->is_end_of_sequence(t)) allowed.push_back(t);
      if (allowed.empty()) break;
      const TokenIndex t = allowed[rng() % allowed.size()];
      ASSERT_TRUE(with_cache.accept_token(t, *vocabulary));
      ASSERT_TRUE(without.accept_token(t, *vocabulary));
    }
  }
}

TEST(RuleDfaCache, BoundsRefuseTheSameGrammarsWithTheSameErrors) {
  // Thousands of automaton states a rule: 20 rules fit the bounds, 150 do not.
  const Expr leaf = repeat(byte_range('a', 'z'), 0, 999);
  const auto many = [&](int rules) {
    Grammar grammar;
    std::vector<Expr> refs;
    for (int i = 0; i < rules; ++i)
      refs.push_back(ref(grammar.add_rule("leaf" + std::to_string(i), leaf)));
    return std::pair{std::move(grammar), sequence(std::move(refs))};
  };
  const auto error_of = [&](int rules, RuleDfaCache* cache) {
    auto [grammar, root] = many(rules);
    try {
      (void)CompiledGrammar::compile_expr(std::move(grammar), std::move(root), cache);
    } catch (const GrammarError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  RuleDfaCache cache;
  EXPECT_EQ(error_of(1, &cache), "");
  EXPECT_EQ(cache.size(), 1u);
  for (const int rules : {20, 99, 101, 150}) {
    const std::string without = error_of(rules, nullptr);
    EXPECT_EQ(error_of(rules, &cache), without) << rules << " rules";
    if (rules == 20) {
      EXPECT_EQ(without, "");
    }
    if (rules == 150) {
      EXPECT_NE(without, "");
    }
  }
}

TEST(LeafWalk, GivesTheStackWalksTokensAndRuleEnds) {
  const auto vocabulary = testing::test_vocabulary();
  const auto grammar = compile(schema_named(1), nullptr);
  std::size_t leaf_states = 0;
  for (StateId s = 0; s < grammar->state_count(); ++s) {
    if (!grammar->in_leaf_rule(s) || !grammar->reads_bytes(s)) continue;
    ++leaf_states;
    std::vector<std::uint32_t> leaf(vocabulary->mask_words(), 0), stacks(leaf.size(), 0);
    std::vector<std::uint32_t> leaf_ends, stack_ends;
    walk_leaf_rule(*grammar, *vocabulary, s, leaf, leaf_ends);
    StackArena arena;
    const StackId top = arena.push(s, kBottom);
    MaskWalk(*grammar, *vocabulary, arena).walk(0, std::span(&top, 1), stacks, &stack_ends);
    ASSERT_EQ(leaf, stacks) << "state " << s;
    ASSERT_EQ(leaf_ends, stack_ends) << "state " << s;
  }
  EXPECT_GT(leaf_states, 50u);  // a 12-character string alone is hundreds
}

}  // namespace
}  // namespace baton::grammar::rule_dfa_cache_test
