// OpenAI's logit_bias as the request parser reads it (through parse_completion_call, as a
// client sends it) and as the route checks it against a model's vocabulary.
#include "baton/server/api/logit_bias_field.h"

#include <gtest/gtest.h>

#include <string>

#include "baton/server/api/openai_request.h"
#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using Kind = CompletionCall::Kind;

std::string chat_with(const std::string& bias) {
  return R"({"model": "m", "messages": [{"role": "user", "content": "x"}], "logit_bias": )" + bias +
         "}";
}

// The refusal of `bias`; fails the test when it parses.
ApiError bias_refusal(const std::string& bias) {
  try {
    (void)parse_completion_call(chat_with(bias), Kind::chat);
  } catch (const ApiError& error) {
    return error;
  }
  ADD_FAILURE() << "accepted: " << bias;
  return ApiError(0, "", "");
}

void expect_refused(const std::string& bias, const std::string& names) {
  const ApiError error = bias_refusal(bias);
  EXPECT_EQ(error.status(), 400) << bias;
  EXPECT_EQ(error.param(), "logit_bias") << bias;
  EXPECT_NE(std::string(error.what()).find(names), std::string::npos)
      << bias << ": " << error.what();
}

TEST(LogitBiasField, ReadsTheMapSortedByTokenInBothKinds) {
  const CompletionCall chat = parse_completion_call(
      chat_with(R"({"50256": -100, "7": 2.5, "0": 100, "12": -0.25})"), Kind::chat);
  const LogitBias& bias = chat.sampling.logit_bias;
  ASSERT_EQ(bias.size(), 4u);
  EXPECT_EQ(bias[0].token, 0);
  EXPECT_FLOAT_EQ(bias[0].bias, 100.0f);
  EXPECT_EQ(bias[1].token, 7);
  EXPECT_FLOAT_EQ(bias[1].bias, 2.5f);
  EXPECT_EQ(bias[2].token, 12);
  EXPECT_FLOAT_EQ(bias[2].bias, -0.25f);
  EXPECT_EQ(bias[3].token, 50256);
  EXPECT_FLOAT_EQ(bias[3].bias, -100.0f);
  const CompletionCall text =
      parse_completion_call(R"({"model": "m", "prompt": "x", "logit_bias": {"3": 1}})", Kind::text);
  ASSERT_EQ(text.sampling.logit_bias.size(), 1u);
  EXPECT_EQ(text.sampling.logit_bias[0].token, 3);
}

TEST(LogitBiasField, AnEmptyObjectOrNullIsNoBias) {
  EXPECT_TRUE(parse_completion_call(chat_with("{}"), Kind::chat).sampling.logit_bias.empty());
  EXPECT_TRUE(parse_completion_call(chat_with("null"), Kind::chat).sampling.logit_bias.empty());
}

TEST(LogitBiasField, RefusesKeysThatAreNotTokenIds) {
  expect_refused(R"({"abc": 1})", "\"abc\"");
  expect_refused(R"({"-5": 1})", "\"-5\"");
  expect_refused(R"({"1.5": 1})", "\"1.5\"");
  expect_refused(R"({"": 1})", "\"\"");
  expect_refused(R"({" 7": 1})", "\" 7\"");
  expect_refused(R"({"1e3": 1})", "\"1e3\"");
  expect_refused(R"({"7": 1, "007": 2})", "token 7 twice");
}

// A key of digits is a token id however large: out of range, not "not decimal".
TEST(LogitBiasField, AKeyTooLargeForATokenIdIsOutOfRangeNamingTheKey) {
  for (const std::string key : {"2147483648", "99999999999999999999", "00000000000000004294967296"}) {
    expect_refused("{\"" + key + "\": 1}", "'logit_bias' key \"" + key.substr(0, 35));
    const std::string message = bias_refusal("{\"" + key + "\": 1}").what();
    EXPECT_NE(message.find("out of range: too large"), std::string::npos) << message;
    EXPECT_EQ(message.find("decimal"), std::string::npos) << message;
  }
  // Leading zeros do not make an id too large.
  const CompletionCall call =
      parse_completion_call(chat_with(R"({"000000000000012": 1})"), Kind::chat);
  ASSERT_EQ(call.sampling.logit_bias.size(), 1u);
  EXPECT_EQ(call.sampling.logit_bias[0].token, 12);
}

TEST(LogitBiasField, RefusesValuesOutOfRangeOrNotNumbers) {
  expect_refused(R"({"5": 100.5})", "\"5\"");
  expect_refused(R"({"5": -101})", "-101");
  expect_refused(R"({"5": 1e300})", "must be in [-100, 100]");
  expect_refused(R"({"5": "10"})", "must be a number");
  expect_refused(R"({"5": null})", "must be a number");
  expect_refused(R"({"5": true})", "must be a number");
  expect_refused(R"({"5": [1]})", "must be a number");
  expect_refused(R"([1, 2])", "must be an object");
  expect_refused(R"("5:1")", "must be an object");
}

TEST(LogitBiasField, AcceptsThreeHundredEntriesAndRefusesMore) {
  const auto map_of = [](int entries) {
    std::string map = "{";
    for (int i = 0; i < entries; ++i) map += (i ? ", \"" : "\"") + std::to_string(i) + "\": 1";
    return map + "}";
  };
  EXPECT_EQ(parse_completion_call(chat_with(map_of(300)), Kind::chat).sampling.logit_bias.size(),
            300u);
  expect_refused(map_of(301), "301 entries; at most 300");
}

}  // namespace
}  // namespace baton
