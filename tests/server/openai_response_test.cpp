#include "baton/server/api/openai_response.h"

#include <gtest/gtest.h>

#include "model/llama3_tokenizer.h"

namespace baton {
namespace {

const BpeTokenizer& tokenizer() { return testing::llama3_tokenizer(); }

// The token ids of three one-letter texts whose alphabetical order is not their
// probabilities' order.
TokenId id_of(const std::string& text) {
  const std::vector<TokenId> ids = tokenizer().encode(text);
  EXPECT_EQ(ids.size(), 1u) << text;
  return ids.front();
}

TEST(OpenAiResponse, ACompletionsTopLogprobsListsTheMostProbableFirst) {
  const ResponseIdentity identity{CompletionCall::Kind::text, "cmpl-1", 1, "m"};
  GenerationResult result;
  result.text = "z";
  TokenLogprobs token{id_of("z"), -0.1f, {}};
  token.top = {{id_of("z"), -0.1f}, {id_of("a"), -2.5f}, {id_of("m"), -3.0f}};
  const std::vector<TokenLogprobs> logprobs = {token};
  const std::string text = dump(completion_json(identity, result, &logprobs, tokenizer()));
  const std::size_t z = text.find(R"("z":-0.1)"), a = text.find(R"("a":-2.5)"),
                    m = text.find(R"("m":-3)");
  ASSERT_NE(z, std::string::npos) << text;
  ASSERT_NE(a, std::string::npos) << text;
  ASSERT_NE(m, std::string::npos) << text;
  EXPECT_LT(z, a) << text;
  EXPECT_LT(a, m) << text;
}

}  // namespace
}  // namespace baton
