#include "baton/server/api/openai_response.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "model/llama3_tokenizer.h"

namespace baton {
namespace {

// The token ids of three one-letter texts whose alphabetical order is not their
// probabilities' order.
TokenId id_of(const std::string& text) {
  const std::vector<TokenId> ids = testing::llama3_tokenizer().encode(text);
  EXPECT_EQ(ids.size(), 1u) << text;
  return ids.front();
}

TEST(OpenAiResponse, ACompletionsTopLogprobsListsTheMostProbableFirst) {
  const ResponseIdentity identity{
      .kind = CompletionCall::Kind::text, .id = "cmpl-1", .created = 1, .model = "m"};
  GenerationResult result;
  result.text = "z";
  TokenLogprobs token{.token = id_of("z"), .logprob = -0.1f, .top = {}};
  token.top = {{id_of("z"), -0.1f}, {id_of("a"), -2.5f}, {id_of("m"), -3.0f}};
  const std::vector<TokenLogprobs> logprobs = {token};
  const std::string text =
      dump(completion_json(identity, result, &logprobs, testing::llama3_tokenizer()));
  const std::size_t z = text.find(R"("z":-0.1)"), a = text.find(R"("a":-2.5)"),
                    m = text.find(R"("m":-3)");
  ASSERT_NE(z, std::string::npos) << text;
  ASSERT_NE(a, std::string::npos) << text;
  ASSERT_NE(m, std::string::npos) << text;
  EXPECT_LT(z, a) << text;
  EXPECT_LT(a, m) << text;
}

// Lone bytes of UTF-8 sequences print as the same text (U+FFFD): the response has one key for
// them, with the likelier token's value.
TEST(OpenAiResponse, TwoTopTokensWithOneTextKeepTheLikelierValue) {
  std::optional<TokenId> first, second;
  std::map<std::string, TokenId> seen;
  for (TokenId id = 0;
       id < static_cast<TokenId>(testing::llama3_tokenizer().vocab_size()) && !second; ++id) {
    const std::string text = dump(nlohmann::json(
        testing::llama3_tokenizer().decode({id}, false, BpeTokenizer::Decoding::continuation)));
    if (const auto it = seen.find(text); it != seen.end()) {
      first = it->second;
      second = id;
    }
    seen.emplace(text, id);
  }
  ASSERT_TRUE(second.has_value()) << "no two tokens of the vocabulary print alike";
  const ResponseIdentity identity{
      .kind = CompletionCall::Kind::text, .id = "cmpl-1", .created = 1, .model = "m"};
  GenerationResult result;
  TokenLogprobs token{
      .token = *first, .logprob = -0.5f, .top = {{*first, -0.5f}, {*second, -1.5f}}};
  const std::vector<TokenLogprobs> logprobs = {token};
  const nlohmann::json body = nlohmann::json::parse(
      dump(completion_json(identity, result, &logprobs, testing::llama3_tokenizer())));
  const auto& top = body["choices"][0]["logprobs"]["top_logprobs"][0];
  ASSERT_EQ(top.size(), 1u) << top.dump();
  EXPECT_FLOAT_EQ(top.begin().value().get<float>(), -0.5f) << top.dump();
}

}  // namespace
}  // namespace baton
