// The byte-level BPE against Hugging Face `tokenizers` 0.23.2: tests/data/tokenizers/*
// holds two small tokenizers trained with it (Llama 3's split pattern, and GPT-2's
// ByteLevel regex) and the ids it gave for hard strings (scripts/make_reference_data.py).
#include "baton/model/tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/byte_level.h"

namespace baton {
namespace {

const std::filesystem::path kTokenizerDir = std::filesystem::path(BATON_TEST_DATA) / "tokenizers";

class ReferenceIds : public ::testing::TestWithParam<const char*> {};

TEST_P(ReferenceIds, MatchTokenizersExactlyAndRoundTrip) {
  const auto folder = kTokenizerDir / GetParam();
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(folder);
  std::ifstream in(folder / "reference.json");
  const auto reference = nlohmann::json::parse(in);
  ASSERT_GT(reference.size(), 10u);
  for (const auto& entry : reference) {
    const std::string text = entry["text"];
    const auto expected = entry["ids"].get<std::vector<TokenId>>();
    const std::vector<TokenId> ids = tokenizer.encode(text);
    EXPECT_EQ(ids, expected) << GetParam() << ": '" << text << "'";
    EXPECT_EQ(tokenizer.decode(ids), text);
  }
}

INSTANTIATE_TEST_SUITE_P(Styles, ReferenceIds, ::testing::Values("llama3_style", "gpt2_style"));

TEST(BpeTokenizer, AnyBytesRoundTripIncludingInvalidUtf8) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kTokenizerDir / "llama3_style");
  const std::string cases[] = {
      std::string("\xff\xfe invalid", 10),  // bytes that are never UTF-8
      "\xc3\x28 bad continuation",
      "lone \x80\xbf continuation bytes",
      "truncated \xf0\x9f\x98",  // the first three bytes of an emoji
      std::string("nul \0 inside", 12),
      "<|im_start|>\xe2\x82",  // a special token, then half a character
  };
  for (const std::string& text : cases) {
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text);
  }
  // Every single byte value.
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(one)), one) << b;
  }
}

TEST(BpeTokenizer, SpecialTokensAreOneIdAndCanBeSkipped) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_directory(kTokenizerDir / "llama3_style");
  const auto start = tokenizer.token_id("<|im_start|>");
  ASSERT_TRUE(start.has_value());
  EXPECT_TRUE(tokenizer.is_special(*start));
  const auto ids = tokenizer.encode("<|im_start|>hi");
  EXPECT_EQ(ids.front(), *start);
  EXPECT_EQ(tokenizer.decode(ids, /*skip_special=*/true), "hi");
  // Past the tokenizer's vocabulary (a model's padding ids): nothing, as in tokenizers.
  EXPECT_EQ(tokenizer.decode({*start, static_cast<TokenId>(tokenizer.vocab_size()), -1}),
            "<|im_start|>");
}

TEST(ByteLevel, TheGpt2Alphabet) {
  // Space is U+0120 'Ġ', newline U+010A 'Ċ', 'a' itself; 0xAD (soft hyphen) is shifted.
  EXPECT_EQ(to_byte_level(" "), "\xc4\xa0");
  EXPECT_EQ(to_byte_level("\n"), "\xc4\x8a");
  EXPECT_EQ(to_byte_level("a"), "a");
  EXPECT_EQ(to_byte_level("\xad"), "\xc5\x83");  // the 68th shifted byte: U+0143
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(from_byte_level(to_byte_level(all)), all);
  EXPECT_FALSE(from_byte_level("\xe4\xb8\xad").has_value());  // '中' is not in the alphabet
}

TEST(BpeTokenizer, UnsupportedOrBrokenFilesAreClearErrors) {
  const struct {
    const char* json;
    const char* message;
  } cases[] = {
      {"not json", "not a JSON object"},
      {R"({"model": {"type": "WordPiece", "vocab": {}}})", "model.type must be BPE"},
      {R"({"model": {"type": "BPE", "vocab": {"a": -1}}})", "is not a token id"},
      {R"({"model": {"type": "BPE", "vocab": {}, "merges": ["ab"]}})", "is not two symbols"},
      {R"({"model": {"type": "BPE", "vocab": {}}, "pre_tokenizer": {"type": "Digits"}})",
       "pre-tokenizer 'Digits' is not supported"},
      {R"({"model": {"type": "BPE", "vocab": {}}, "normalizer": {"type": "Lowercase"}})",
       "normalizer: 'Lowercase' is not supported"},
      {R"({"model": {"type": "BPE", "vocab": {}}, "normalizer": {"type": "Replace",
          "pattern": {"Regex": " +"}, "content": "_"}})",
       "Replace is supported with a {\"String\": ...} pattern only"},
      {R"({"model": {"type": "BPE", "vocab": {}, "byte_fallback": true},
          "decoder": {"type": "CTC"}})",
       "decoder: 'CTC' is not supported"},
      {R"({"model": {"type": "BPE", "vocab": {}}, "pre_tokenizer": {"type": "Metaspace",
          "prepend_scheme": "sometimes"}})",
       "\"prepend_scheme\" must be always, first or never"},
      {R"({"model": {"type": "BPE", "vocab": {}, "byte_fallback": true}, "pre_tokenizer":
          {"type": "ByteLevel"}})",
       "mixes ByteLevel with SentencePiece-style steps"},
      {R"({"model": {"type": "BPE", "vocab": {}}, "pre_tokenizer": {"type": "Split",
          "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated", "invert": false}})",
       "bad pre-tokenizer pattern"},
  };
  for (const auto& c : cases) {
    try {
      BpeTokenizer(c.json, "dir/tokenizer.json");
      ADD_FAILURE() << "accepted: " << c.json;
    } catch (const ModelFileError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("dir/tokenizer.json"), std::string::npos) << what;
      EXPECT_NE(what.find(c.message), std::string::npos) << what;
    }
  }
  EXPECT_THROW(BpeTokenizer::from_directory("/nonexistent"), ModelFileError);
  // A vocabulary without the byte 'b' and no unk_token: a broken file, found when encoding.
  const BpeTokenizer no_b(R"({"model": {"type": "BPE", "vocab": {"a": 0}}})", "dir/tokenizer.json");
  try {
    no_b.encode("ab");
    ADD_FAILURE() << "encoded a byte the vocabulary lacks";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find("dir/tokenizer.json: symbol 'b'"), std::string::npos)
        << e.what();
  }
}

// Found by fuzz/tokenizer_json_fuzz: the id table has max id + 1 entries, so an id of
// 2^31 - 1 overflowed `max_id + 1`, an added token's id of 2e9 asked for ~64 GB, and one
// of 2^32 wrapped around to 0. Such ids are refused; the largest allowed one loads.
TEST(BpeTokenizer, HugeTokenIdsAreRefusedWithoutAHugeTable) {
  const char* huge[] = {
      R"({"model": {"type": "BPE", "vocab": {"a": 2147483647}}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 4194304}}})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}},
          "added_tokens": [{"id": 2000000000, "content": "x"}]})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}},
          "added_tokens": [{"id": 4294967296, "content": "x"}]})",
      R"({"model": {"type": "BPE", "vocab": {"a": 0}},
          "added_tokens": [{"id": -1, "content": "x"}]})",
  };
  for (const char* json : huge) {
    try {
      BpeTokenizer(json, "tokenizer.json");
      ADD_FAILURE() << "accepted: " << json;
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a token id"), std::string::npos) << e.what();
    }
  }
  const BpeTokenizer largest(R"({"model": {"type": "BPE", "vocab": {"a": 4194303}}})", "t.json");
  EXPECT_EQ(largest.vocab_size(), 4194304u);
  EXPECT_EQ(largest.encode("a"), std::vector<TokenId>{4194303});
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

// llama3_style's tokenizer.json with `post_processor` set to `processor` (JSON text).
BpeTokenizer with_post_processor(const std::string& processor) {
  std::ifstream in(kTokenizerDir / "llama3_style" / "tokenizer.json");
  nlohmann::json root = nlohmann::json::parse(in);
  root["post_processor"] = nlohmann::json::parse(processor);
  return BpeTokenizer(root.dump(), "dir/tokenizer.json");
}

// The shapes published tokenizer.json files carry: Llama 3 (ByteLevel, then a BOS
// template), Qwen3-Embedding (the text, then <|endoftext|>), RoBERTa (cls, sep).
TEST(BpePostProcessor, PutsTheTemplatesSpecialTokensAroundTheText) {
  const std::string text = "Hello, world";
  const BpeTokenizer plain = BpeTokenizer::from_directory(kTokenizerDir / "llama3_style");
  const std::vector<TokenId> ids = plain.encode(text);
  EXPECT_EQ(plain.encode_with_special(text), ids);  // no post_processor: nothing added
  const BpeTokenizer llama = with_post_processor(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                  {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [0],
                                                "tokens": ["<|begin_of_text|>"]}}}]})");
  std::vector<TokenId> expected = {0};
  expected.insert(expected.end(), ids.begin(), ids.end());
  EXPECT_EQ(llama.encode_with_special(text), expected);
  EXPECT_EQ(llama.encode(text), ids);  // encode() itself adds nothing
  const BpeTokenizer qwen3_embedding = with_post_processor(R"({"type": "TemplateProcessing",
      "single": [{"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<|end_of_text|>", "type_id": 0}}],
      "special_tokens": {"<|end_of_text|>": {"id": "<|end_of_text|>", "ids": [1],
                                             "tokens": ["<|end_of_text|>"]}}})");
  expected = ids;
  expected.push_back(1);
  EXPECT_EQ(qwen3_embedding.encode_with_special(text), expected);
  const BpeTokenizer roberta = with_post_processor(
      R"({"type": "RobertaProcessing", "sep": ["</s>", 3], "cls": ["<s>", 2]})");
  expected = {2};
  expected.insert(expected.end(), ids.begin(), ids.end());
  expected.push_back(3);
  EXPECT_EQ(roberta.encode_with_special(text), expected);
}

TEST(BpePostProcessor, WhatItCannotReadIsNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type": "Wordpiece"})", "post_processor: type 'Wordpiece' is not supported"},
      {R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}},
          {"Sequence": {"id": "A"}}], "special_tokens": {}})",
       "special token '<x>' is not in special_tokens"},
      {R"({"type": "TemplateProcessing", "single": [], "special_tokens": {}})", "has no"},
      {R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}},
          {"Sequence": {"id": "A"}}], "special_tokens": {"<x>": {"ids": [99999]}}})",
       "post_processor: id 99999 is outside the vocabulary"},
  };
  for (const auto& [processor, message] : cases) {
    try {
      with_post_processor(processor);
      ADD_FAILURE() << processor << ": accepted";
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("dir/tokenizer.json"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace baton
