// ConstrainedOutput on a hand-made vocabulary: a grammar from the first token masks every
// step; a lazy one waits for its trigger, then reads the text from the trigger on, and
// leaves the output free when that text is not in its language.
#include "baton/engine/llm/constrained_output.h"

#include <gtest/gtest.h>

#include <cmath>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/mask_cache.h"

namespace baton::constrained_output_test {
namespace {

namespace g = baton::grammar;

// Token ids: 0 "a", 1 "b", 2 "<t>", 3 "<", 4 "t>", 5 "x", 6 "y", 7 end.
constexpr TokenId kA = 0, kB = 1, kTrigger = 2, kOpen = 3, kClose = 4, kX = 5, kY = 6, kEnd = 7;

std::shared_ptr<const OutputGrammar> grammar_of(std::vector<std::string> triggers) {
  auto vocabulary = std::make_shared<const g::TokenVocabulary>(
      std::vector<std::string>{"a", "b", "<t>", "<", "t>", "x", "y", ""},
      std::vector<g::TokenIndex>{7});
  // <t> then one to three x.
  auto compiled = g::CompiledGrammar::compile_expr(
      g::Grammar(), g::sequence({g::literal("<t>"), g::repeat(g::literal("x"), 1, 3)}));
  return ready_grammar(std::make_shared<g::MaskCache>(compiled, vocabulary), std::move(triggers));
}

// The tokens the mask lets through.
std::vector<TokenId> allowed(ConstrainedOutput& output) {
  const std::vector<float> logits(9, 1.0f);  // one more than the vocabulary: padding
  std::vector<float> masked;
  output.mask(logits, masked);
  std::vector<TokenId> out;
  for (std::size_t t = 0; t < masked.size(); ++t) {
    if (std::isfinite(masked[t])) out.push_back(static_cast<TokenId>(t));
  }
  return out;
}

TEST(ConstrainedOutput, AGrammarFromTheFirstTokenMasksEveryStep) {
  ConstrainedOutput output(grammar_of({}));
  ASSERT_TRUE(output.active());
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kTrigger, kOpen}));
  output.accept(kOpen, "<");
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kClose}));
  output.accept(kClose, "<t>");
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kX}));
  output.accept(kX, "<t>x");
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kX, kEnd}));  // may end now
  EXPECT_FALSE(output.finished());
  output.accept(kX, "<t>xx");
  output.accept(kX, "<t>xxx");
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kEnd}));  // the grammar is done
  EXPECT_TRUE(output.finished());  // no byte can follow: the engine ends the answer
  EXPECT_THROW(output.accept(kX, "<t>xxxx"), std::logic_error);
}

TEST(ConstrainedOutput, ALazyGrammarStartsAtItsTriggerEvenAcrossTokens) {
  ConstrainedOutput output(grammar_of({"<t>"}));
  EXPECT_FALSE(output.active());
  output.accept(kA, "a");
  output.accept(kB, "ab");
  output.accept(kOpen, "ab<");
  EXPECT_FALSE(output.active());
  output.accept(kClose, "ab<t>");  // the trigger spans two tokens
  ASSERT_TRUE(output.active());
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kX}));
}

TEST(ConstrainedOutput, ALazyGrammarReadsTheTextAfterItsTriggerAtOnce) {
  ConstrainedOutput output(grammar_of({"<t>"}));
  output.accept(kA, "a<t>x");  // a token that held the trigger and more
  ASSERT_TRUE(output.active());
  EXPECT_EQ(allowed(output), (std::vector<TokenId>{kX, kEnd}));
}

TEST(ConstrainedOutput, ALazyGrammarRefusedLeavesTheOutputFree) {
  ConstrainedOutput output(grammar_of({"<t>"}));
  output.accept(kTrigger, "<t>y");  // y is not in the grammar's language
  EXPECT_FALSE(output.active());
  output.accept(kTrigger, "<t>y<t>");  // and it never starts again
  EXPECT_FALSE(output.active());
}

TEST(ConstrainedOutput, NoGrammarIsRefused) {
  EXPECT_THROW(ConstrainedOutput(nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace baton::constrained_output_test
