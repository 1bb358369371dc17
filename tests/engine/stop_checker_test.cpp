// StopChecker against a real byte-level tokenizer: stop strings across token boundaries,
// the earliest of several, end tokens (and ignoring them), max_tokens and the context.
#include "baton/engine/llm/stop_checker.h"

#include <gtest/gtest.h>
#include "model/llama3_tokenizer.h"

namespace baton {
namespace {

const BpeTokenizer& tokenizer() { return testing::llama3_tokenizer(); }

// Feeds the tokens of `text` until the checker stops; returns why (none if it never did).
std::optional<FinishReason> feed(StopChecker& checker, const std::string& text) {
  for (const TokenId token : tokenizer().encode(text)) {
    if (const auto reason = checker.add(token)) return reason;
  }
  return std::nullopt;
}

GenerationParams with_stops(std::vector<std::string> stops, int max_tokens = 100) {
  GenerationParams p;
  p.stop = std::move(stops);
  p.max_tokens = max_tokens;
  return p;
}

TEST(StopChecker, CutsTheTextBeforeAStopStringSpanningTokens) {
  StopChecker checker(&tokenizer(), with_stops({"STOP"}), {}, 1000);
  EXPECT_EQ(feed(checker, "The answer is 42.\nSTOP and more text"), FinishReason::stop);
  EXPECT_EQ(checker.text(), "The answer is 42.\n");
}

TEST(StopChecker, TheEarliestStopStringWins) {
  StopChecker checker(&tokenizer(), with_stops({"world", "lo w"}), {}, 1000);
  EXPECT_EQ(feed(checker, "hello world"), FinishReason::stop);
  EXPECT_EQ(checker.matched_stop(), "lo w");  // what Anthropic's stop_sequence says
  EXPECT_EQ(checker.text(), "hel");
}

TEST(StopChecker, OfStopStringsFoundAtOnePlaceTheFirstListedIsTheMatch) {
  StopChecker checker(&tokenizer(), with_stops({"wor", "world"}), {}, 1000);
  EXPECT_FALSE(checker.matched_stop().has_value());
  EXPECT_EQ(feed(checker, "hello world"), FinishReason::stop);
  EXPECT_EQ(checker.matched_stop(), "wor");
  EXPECT_EQ(checker.text(), "hello ");
}

TEST(StopChecker, EndTokensStopUnlessIgnored) {
  const TokenId end = 7;
  StopChecker stops(&tokenizer(), with_stops({}), {end}, 1000);
  EXPECT_FALSE(stops.add(100).has_value());
  EXPECT_EQ(stops.add(end), FinishReason::stop);
  EXPECT_EQ(stops.text(), tokenizer().decode({100}));

  GenerationParams ignoring = with_stops({}, 3);
  ignoring.ignore_eos = true;
  StopChecker goes_on(&tokenizer(), ignoring, {end}, 1000);
  EXPECT_FALSE(goes_on.add(end).has_value());
  EXPECT_FALSE(goes_on.add(end).has_value());
  EXPECT_EQ(goes_on.add(end), FinishReason::length);
}

TEST(StopChecker, MaxTokensAndTheContextEndWithLength) {
  StopChecker by_max(nullptr, with_stops({}, 2), {}, 1000);
  EXPECT_FALSE(by_max.add(5).has_value());
  EXPECT_EQ(by_max.add(5), FinishReason::length);
  StopChecker by_context(nullptr, with_stops({}, 50), {}, 1);
  EXPECT_EQ(by_context.add(5), FinishReason::length);
}

TEST(StopChecker, RefusesWhatCannotWork) {
  EXPECT_THROW(StopChecker(nullptr, with_stops({"x"}), {}, 10), std::invalid_argument);
  EXPECT_THROW(StopChecker(&tokenizer(), with_stops({""}), {}, 10), std::invalid_argument);
  EXPECT_THROW(StopChecker(nullptr, with_stops({}, 0), {}, 10), std::invalid_argument);
}


// What a stream sends: the deltas of take_stable_text, token by token.
std::string stream_of(StopChecker& checker, const std::string& text, bool* every_prefix) {
  std::string sent;
  *every_prefix = true;
  for (const TokenId token : tokenizer().encode(text)) {
    const auto reason = checker.add(token);
    sent += checker.take_stable_text(reason.has_value());
    *every_prefix = *every_prefix && checker.text().compare(0, sent.size(), sent) == 0;
    if (reason) break;
  }
  return sent;
}

TEST(StopCheckerStream, NeverSendsWhatAStopStringLaterCuts) {
  StopChecker checker(&tokenizer(), with_stops({"STOP", "\n\n"}), {}, 1000);
  bool every_prefix = false;
  const std::string sent = stream_of(checker, "The answer is 42.\nSTOP and more text", &every_prefix);
  EXPECT_TRUE(every_prefix);
  EXPECT_EQ(sent, "The answer is 42.\n");
  EXPECT_EQ(sent, checker.text());
}

TEST(StopCheckerStream, HoldsBackACharacterUntilItIsComplete) {
  StopChecker checker(&tokenizer(), with_stops({}, 1000), {}, 1000);
  bool every_prefix = false;
  const std::string text = "naïve 🙂 café 日本語 done";
  const std::string sent = stream_of(checker, text, &every_prefix);
  EXPECT_TRUE(every_prefix);
  EXPECT_EQ(sent.find("\xEF\xBF\xBD"), std::string::npos) << "sent a replacement character";
  EXPECT_EQ(checker.take_stable_text(true), "");  // nothing was left: the text is complete
  EXPECT_EQ(sent, text);
}

TEST(StopCheckerStream, TheLastTakeSendsWhatWasHeldBack) {
  const int tokens = static_cast<int>(tokenizer().encode("a ST").size());
  StopChecker checker(&tokenizer(), with_stops({"STOP"}, tokens), {}, 1000);
  std::string sent;
  std::optional<FinishReason> reason;
  for (const TokenId token : tokenizer().encode("a ST")) {
    reason = checker.add(token);
    sent += checker.take_stable_text(reason.has_value());
    if (reason) break;
  }
  // "ST" may begin "STOP" and is held until the end (here max_tokens) says it will not.
  EXPECT_EQ(sent, checker.text());
  EXPECT_EQ(sent, "a ST");
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

TEST(Utf8CompletePrefix, CutsOnlyAnIncompleteLastCharacter) {
  EXPECT_EQ(utf8_complete_prefix(""), 0u);
  EXPECT_EQ(utf8_complete_prefix("abc"), 3u);
  EXPECT_EQ(utf8_complete_prefix("a\xD1"), 1u);              // т's first byte of two
  EXPECT_EQ(utf8_complete_prefix("a\xD1\x82"), 3u);          // т whole
  EXPECT_EQ(utf8_complete_prefix("a\xE6\x97"), 1u);          // 日, two of three
  EXPECT_EQ(utf8_complete_prefix("a\xE6\x97\xA5"), 4u);
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x99"), 1u);      // 🙂, three of four
  EXPECT_EQ(utf8_complete_prefix("a\xF0\x9F\x99\x82"), 5u);
  EXPECT_EQ(utf8_complete_prefix("a\x82\x82\x82\x82"), 5u);  // no lead byte: nothing to wait for
}

// The model may spell a character byte by byte (one byte-level token each): the stream
// must not send its first bytes alone (a client would show each as U+FFFD).
TEST(StopCheckerStream, HoldsBackACharacterSpelledOneByteAtATime) {
  std::vector<TokenId> tokens;
  for (const char* piece : {"x", "\xD1", "\x82", "y", "\xF0", "\x9F", "\x99", "\x82"}) {
    const std::vector<TokenId> ids = tokenizer().encode(piece);
    ASSERT_EQ(ids.size(), 1u) << "one byte-level token for each byte";
    tokens.push_back(ids[0]);
  }
  StopChecker checker(&tokenizer(), with_stops({}, 1000), {}, 1000);
  std::vector<std::string> deltas;
  for (const TokenId token : tokens) {
    (void)checker.add(token);
    deltas.push_back(checker.take_stable_text(false));
  }
  EXPECT_EQ(deltas, (std::vector<std::string>{"x", "", "\xD1\x82", "y", "", "", "",
                                              "\xF0\x9F\x99\x82"}));
}

}  // namespace
}  // namespace baton
