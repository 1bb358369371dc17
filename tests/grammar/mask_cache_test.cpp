// The vocabulary trie and the shared mask cache: duplicate and empty tokens, an
// end-of-sequence id outside the vocabulary, and one MaskCache shared by matchers on four
// threads giving the same masks as one thread alone (TSan runs it).
#include "baton/grammar/mask_cache.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "baton/grammar/json_schema.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::mask_cache_test {
namespace {

TEST(TokenVocabulary, DuplicatesEmptyAndEndOfSequence) {
  const auto vocabulary = std::make_shared<const TokenVocabulary>(
      std::vector<std::string>{"ab", "a", "", "ab", "b", "</s>"}, std::vector<TokenIndex>{5});
  EXPECT_EQ(vocabulary->mask_words(), 1u);
  const auto grammar =
      CompiledGrammar::compile_expr(Grammar{}, choice({literal("ab"), literal("b")}));
  MaskCache cache(grammar, vocabulary);
  GrammarMatcher m(grammar);
  std::vector<std::uint32_t> mask(1);
  m.fill_mask(cache, mask);
  EXPECT_EQ(mask[0], 0b011011u);  // "ab" twice, "a", "b"; never "" nor "</s>" here
  ASSERT_TRUE(m.accept_token(3, *vocabulary));
  m.fill_mask(cache, mask);
  EXPECT_EQ(mask[0], 0b100000u);  // only the end of sequence
  EXPECT_THROW(TokenVocabulary({"a"}, {1}), std::invalid_argument);
}

TEST(MaskCache, SharedByThreadsGivesTheSameMasks) {
  const auto vocabulary = testing::test_vocabulary();
  const auto grammar = compile_json_schema(nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array",
          "items": {"type": "number"}}}, "required": ["a", "b"]})"));
  // One walk's tokens, and the masks one thread alone sees along it.
  std::vector<TokenIndex> tokens;
  std::vector<std::vector<std::uint32_t>> expected;
  {
    MaskCache cache(grammar, vocabulary);
    GrammarMatcher m(grammar);
    std::mt19937 rng(8);
    std::vector<std::uint32_t> mask(vocabulary->mask_words());
    for (int step = 0; step < 60 && !m.finished(); ++step) {
      m.fill_mask(cache, mask);
      expected.push_back(mask);
      std::vector<TokenIndex> allowed;
      for (TokenIndex t = 0; t < vocabulary->size(); ++t)
        if (testing::mask_bit(mask, t) && !vocabulary->is_end_of_sequence(t)) allowed.push_back(t);
      if (allowed.empty()) break;
      tokens.push_back(allowed[rng() % allowed.size()]);
      ASSERT_TRUE(m.accept_token(tokens.back(), *vocabulary));
    }
  }
  MaskCache shared(grammar, vocabulary);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        GrammarMatcher m(grammar);
        std::vector<std::uint32_t> mask(vocabulary->mask_words());
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          m.fill_mask(shared, mask);
          if (mask != expected[i]) ++mismatches[static_cast<std::size_t>(t)];
          if (!m.accept_token(tokens[i], *vocabulary)) ++mismatches[static_cast<std::size_t>(t)];
        }
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  EXPECT_GT(shared.cached_states(), 5u);
}

TEST(SharedMasks, GrammarsShareTheMasksOfRulesThatCallNoOther) {
  const auto vocabulary = testing::test_vocabulary();
  const auto shared = std::make_shared<SharedMasks>();
  const auto object = compile_json_schema(nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]})"));
  const auto array = compile_json_schema(
      nlohmann::ordered_json::parse(R"({"type": "array", "items": {"type": "string"}})"));
  std::vector<std::uint32_t> mask(vocabulary->mask_words());
  MaskCache object_cache(object, vocabulary, shared);
  GrammarMatcher in_object(object);
  ASSERT_TRUE(in_object.accept_bytes("{\"s\": \"ab"));
  in_object.fill_mask(object_cache, mask);
  EXPECT_EQ(mask, testing::brute_force_mask(in_object, *vocabulary));
  const std::size_t shared_states = shared->size();
  EXPECT_GT(shared_states, 0u);
  // Inside a string of another grammar: the same rule, so nothing new to compute.
  MaskCache array_cache(array, vocabulary, shared);
  GrammarMatcher in_array(array);
  ASSERT_TRUE(in_array.accept_bytes("[\"ab"));
  in_array.fill_mask(array_cache, mask);
  EXPECT_EQ(mask, testing::brute_force_mask(in_array, *vocabulary));
  EXPECT_EQ(shared->size(), shared_states);
  // And masks stay right along walks of both grammars with the shared cache.
  std::mt19937 rng(6);
  for (const auto& [grammar, cache] :
       {std::pair{object, &object_cache}, std::pair{array, &array_cache}})
    for (int walk = 0; walk < 6; ++walk) {
      GrammarMatcher m(grammar);
      for (int step = 0; step < 25 && !m.finished(); ++step) {
        m.fill_mask(*cache, mask);
        ASSERT_EQ(mask, testing::brute_force_mask(m, *vocabulary));
        std::vector<TokenIndex> allowed;
        for (TokenIndex t = 0; t < vocabulary->size(); ++t)
          if (testing::mask_bit(mask, t) && !vocabulary->is_end_of_sequence(t))
            allowed.push_back(t);
        if (allowed.empty()) break;
        ASSERT_TRUE(m.accept_token(allowed[rng() % allowed.size()], *vocabulary));
      }
    }
}

}  // namespace
}  // namespace baton::grammar::mask_cache_test
