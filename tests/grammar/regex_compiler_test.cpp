// Patterns compiled to grammars against Python's re.fullmatch (the reference), on random
// strings and on strings walked out of each grammar: on ASCII text (without \r, where
// Python's `.` and ECMAScript's differ) the grammar accepts exactly what re accepts;
// on any text, what the grammar accepts re accepts too. And every refused construct is a
// PatternError, quickly. Starts python3 (a process).
#include "baton/grammar/regex_compiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar_matcher.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::regex_compiler_test {
namespace {

std::shared_ptr<const CompiledGrammar> pattern_grammar(std::string_view pattern,
                                                       PatternMatch match) {
  return CompiledGrammar::compile_expr(Grammar{},
                                       compile_pattern(pattern, CharEncoding::raw_utf8, match));
}

bool accepts(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  GrammarMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

// A string walked out of the grammar byte by byte, stopping at random where it may end.
std::string walk_bytes(const std::shared_ptr<const CompiledGrammar>& g, std::mt19937& rng) {
  GrammarMatcher m(g);
  std::string out;
  for (int step = 0; step < 40; ++step) {
    if (m.can_end() && rng() % 4 == 0) break;
    std::vector<char> next;
    for (int b = 0; b < 256; ++b) {
      GrammarMatcher copy = m;
      if (copy.accept_bytes(std::string(1, static_cast<char>(b))))
        next.push_back(static_cast<char>(b));
    }
    if (next.empty()) break;
    const char b = next[rng() % next.size()];
    EXPECT_TRUE(m.accept_bytes(std::string(1, b)));
    out += b;
  }
  return m.can_end() ? out : std::string();
}

const char* const kPatterns[] = {
    "abc",
    "a|b|cd",
    "[a-c]+x?",
    "(ab)*c{2,3}",
    "\\d{3}-\\d{2,}",
    "[^a-z0-9]*",
    "\\w+@\\w+\\.com",
    "^\\s*\\S+$",
    "(?:a|bc)+(?P<n>x)?",
    "[\\d_-]{1,4}",
    ".{2}b",
    "a{0}b",
    "[.]\\.",
    "x{2,}?y",
    "[^\\W]+",
    "\\D\\W",
    "(a|)+b",
    "[\\]a]",
    "\\x41\\u00e9?",
    "a{x}{",
    "\\{\\}",
    "é+[à-ü]",
    "(((a)))|[ab]{2}",
};

TEST(RegexCompiler, AgreesWithPythonRe) {
  std::mt19937 rng(11);
  const std::string alphabet = "abcx01_-. @\t\n{},]A[/?";
  std::vector<nlohmann::json> cases;
  std::vector<bool> ours;
  std::vector<bool> ascii;
  for (const char* pattern : kPatterns) {
    const auto g = pattern_grammar(pattern, PatternMatch::full);
    for (int i = 0; i < 150; ++i) {
      std::string s;
      if (i % 2 == 0) {
        const std::size_t n = rng() % 7;
        for (std::size_t k = 0; k < n; ++k) s += alphabet[rng() % alphabet.size()];
        if (i % 10 == 0) s += "\xc3\xa9";  // é
      } else {
        s = walk_bytes(g, rng);
      }
      cases.push_back(nlohmann::json::array({pattern, s}));
      ours.push_back(accepts(g, s));
      ascii.push_back(std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; }));
    }
  }
  const std::string out = testing::run_python(R"(
import json, re, sys
for line in open(sys.argv[1], encoding='utf-8'):
    pattern, text = json.loads(line)
    print(1 if re.fullmatch(pattern, text) else 0)
)",
                                              cases);
  ASSERT_EQ(out.size(), 2 * cases.size()) << out.substr(0, 2000);
  int positives = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const bool python = out[2 * i] == '1';
    positives += python;
    if (ours[i]) {
      EXPECT_TRUE(python) << cases[i].dump();
    }
    if (ascii[i]) {
      EXPECT_EQ(ours[i], python) << cases[i].dump();
    }
  }
  EXPECT_GT(positives, static_cast<int>(cases.size() / 4));
}

TEST(RegexCompiler, SearchIsUnanchoredUnlessAnchored) {
  const auto contains = pattern_grammar("b+", PatternMatch::search);
  EXPECT_TRUE(accepts(contains, "abbc"));
  EXPECT_FALSE(accepts(contains, "ac"));
  const auto starts = pattern_grammar("^b|c$", PatternMatch::search);
  EXPECT_TRUE(accepts(starts, "bx"));
  EXPECT_TRUE(accepts(starts, "xc"));
  EXPECT_FALSE(accepts(starts, "xb"));
  EXPECT_FALSE(accepts(starts, "cx"));
}

TEST(RegexCompiler, JsonStringEncodingEscapesCanonically) {
  const auto g = CompiledGrammar::compile_expr(
      Grammar{},
      compile_pattern("a\"\\\\\\n[\\x01]", CharEncoding::json_string, PatternMatch::full));
  EXPECT_TRUE(accepts(g, "a\\\"\\\\\\n\\u0001"));
  EXPECT_FALSE(accepts(g, "a\"\\\\\\n\\u0001"));
}

TEST(RegexCompiler, RefusesWhatItCannotHonourQuickly) {
  for (const char* bad : {"a(?=b)",
                          "a(?!b)",
                          "(?<=a)b",
                          "(?<!a)b",
                          "(a)\\1",
                          "(?P<x>a)(?P=x)",
                          "\\bword",
                          "(?i)a",
                          "a*+",
                          "a++",
                          "a**",
                          "\\p{L}",
                          "a{1001}",
                          "(a{1000}){1000}",
                          "((a{100}){100}){100}",
                          "(ab",
                          "ab)",
                          "[ab",
                          "a{,3}",
                          "[]a]",
                          "[^]",
                          "a^b",
                          "a$b",
                          "*a",
                          "\\",
                          "[z-a]",
                          "\\q",
                          "\\ud800"}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(compile_pattern(bad, CharEncoding::json_string, PatternMatch::search),
                 PatternError)
        << bad;
    // Bounded work, not a runaway: far above the microseconds it takes, for a loaded machine.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2000)) << bad;
  }
}

}  // namespace
}  // namespace baton::grammar::regex_compiler_test
