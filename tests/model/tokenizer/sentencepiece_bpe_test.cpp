// SentencePiece-style BPE (Llama 2, Mistral, TinyLlama) against two independent
// references: tests/data/tokenizers/{llama2,mistral}_style hold a SentencePiece BPE model
// trained with Llama 2's settings (Debian's python3-sentencepiece) written as
// tokenizer.json in the two published layouts, and the ids and decoded text Hugging
// Face's tokenizers.js gave for hard strings, checked against SentencePiece's own
// encoding when made (scripts/make_sentencepiece_reference.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton {
namespace {

const std::filesystem::path kSentencePieceDir =
    std::filesystem::path(BATON_TEST_DATA) / "tokenizers";

class SentencePieceReference : public ::testing::TestWithParam<const char*> {};

TEST_P(SentencePieceReference, IdsAndDecodedTextMatchTokenizersJs) {
  const auto folder = kSentencePieceDir / GetParam();
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(folder);
  std::ifstream in(folder / "reference.json");
  const auto reference = nlohmann::json::parse(in);
  ASSERT_GT(reference.size(), 10u);
  for (const auto& entry : reference) {
    const std::string text = entry["text"];
    const auto ids = tokenizer.encode(text);
    EXPECT_EQ(ids, entry["ids"].get<std::vector<TokenId>>()) << GetParam() << ": '" << text;
    EXPECT_EQ(tokenizer.encode_with_special(text),
              entry["ids_with_special"].get<std::vector<TokenId>>())
        << GetParam() << ": '" << text;
    EXPECT_EQ(tokenizer.decode(ids), entry["decoded"].get<std::string>()) << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SentencePieceReference,
                         ::testing::Values("llama2_style", "mistral_style"));

TEST(SentencePieceBpe, GeneratedTextKeepsTheSpaceOfItsFirstWord) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kSentencePieceDir / "llama2_style");
  const std::vector<TokenId> ids = tokenizer.encode("a spaces");
  ASSERT_EQ(tokenizer.decode(ids), "a spaces");
  // A completion's tokens continue the prompt: "▁a▁spaces" is " a spaces" there.
  EXPECT_EQ(tokenizer.decode(ids, false, BpeTokenizer::Decoding::continuation), " a spaces");
  // One token at a time, as logprobs show them.
  EXPECT_EQ(tokenizer.decode({ids.back()}, false, BpeTokenizer::Decoding::continuation), " spaces");
}

TEST(SentencePieceBpe, ACharacterSplitOverTokensComesBackWhole) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kSentencePieceDir / "llama2_style");
  const std::string text = "x\u3001y";  // "、" is not in the vocabulary: three byte tokens
  const std::vector<TokenId> ids = tokenizer.encode(text);
  std::string streamed;
  for (const TokenId id : ids) {
    streamed += tokenizer.decode({id}, false, BpeTokenizer::Decoding::continuation);
  }
  EXPECT_EQ(streamed, " " + text);  // raw bytes per token, whole when put together
}

// A tokenizer.json without byte tokens: what it cannot spell is the unknown token.
BpeTokenizer without_byte_tokens(bool fuse_unk) {
  return BpeTokenizer(R"({"model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": )" +
                          std::string(fuse_unk ? "true" : "false") + R"(,
      "byte_fallback": true, "vocab": {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "ab": 5},
      "merges": [["▁", "a"], ["a", "b"]]},
      "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
      "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}})",
                      "t.json");
}

TEST(SentencePieceBpe, UnknownCharactersAreTheUnknownTokenFusedWhenTheFileSaysSo) {
  EXPECT_EQ(without_byte_tokens(false).encode("ab\u00df\u00dfab"),
            (std::vector<TokenId>{4, 3, 0, 0, 5}));
  EXPECT_EQ(without_byte_tokens(true).encode("ab\u00df\u00dfab"),
            (std::vector<TokenId>{4, 3, 0, 5}));
  // An unknown character between known ones splits the merging: "a" and "b" stay apart.
  EXPECT_EQ(without_byte_tokens(true).encode("a\u00dfb"), (std::vector<TokenId>{4, 0, 3}));
  EXPECT_EQ(without_byte_tokens(true).decode({4, 3, 1, 5}), "ab ab");
}

TEST(SentencePieceBpe, InvalidUtf8FallsBackToBytesWithoutACrash) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kSentencePieceDir / "llama2_style");
  const std::string text = "a\xff\xc3 b";
  const std::vector<TokenId> ids = tokenizer.encode(text);
  EXPECT_EQ(tokenizer.decode(ids), text);
}

}  // namespace
}  // namespace baton
