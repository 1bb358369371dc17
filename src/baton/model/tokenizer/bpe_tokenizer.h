// BpeTokenizer: the BPE of a Hugging Face `tokenizer.json`, in its two kinds:
// - byte-level (GPT-2, Llama 3, Qwen2/3 and their kin): each piece is written in the
//   byte-level alphabet before merging, so any byte string round-trips;
// - SentencePiece-style (Llama 2, Mistral, TinyLlama, Gemma): symbols are characters,
//   spaces are "▁" (a Prepend/Replace normalizer or a Metaspace pre-tokenizer), and a
//   character outside the vocabulary becomes its "<0xNN>" byte tokens (byte_fallback) or
//   the unknown token (consecutive ones fused with fuse_unk).
// Encoding: split off the added (special) tokens, normalize and split the rest, then
// merge adjacent symbols by merge rank. Decoding runs the file's decoder (token_decoder.h).
// Read from tokenizer.json: model.vocab, model.merges ("a b" strings or ["a", "b"] pairs),
// model.ignore_merges, byte_fallback, fuse_unk, unk_token, added_tokens, the normalizer
// (text_normalizer.h), a pre_tokenizer of Split (Regex, Isolated), ByteLevel (use_regex
// adds the GPT-2 pattern) and Metaspace steps, the decoder and the post_processor
// (post_processor.h). Other parts (WordPiece, Unigram) are refused with a clear error.
// Thread-safety: immutable after construction; encode/decode from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "baton/model/files/model_source.h"
#include "baton/model/tokenizer/metaspace.h"
#include "baton/model/tokenizer/post_processor.h"
#include "baton/model/tokenizer/split_regex.h"
#include "baton/model/tokenizer/text_normalizer.h"
#include "baton/model/tokenizer/token_decoder.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

class BpeTokenizer {
 public:
  // `json_text` is tokenizer.json; `file` names it in errors (ModelFileError).
  BpeTokenizer(std::string_view json_text, std::string_view file);
  // The same, already parsed (a GGUF file's vocabulary: gguf_tokenizer.h).
  static BpeTokenizer from_json(const nlohmann::json& root, std::string_view file);
  // The model's tokenizer.json, or its GGUF file's vocabulary (gguf_tokenizer.h).
  static BpeTokenizer from_source(const ModelSource& source);
  static BpeTokenizer from_directory(const std::filesystem::path& path) {
    return from_source(ModelSource::open(path));
  }

  std::vector<TokenId> encode(std::string_view text) const;
  // How decode() treats the start of the ids' text.
  enum class Decoding {
    whole,        // a text of its own, as tokenizers' decode: a prepended "▁" is dropped
    continuation  // text that continues earlier text (generated tokens): it keeps its space
  };
  // encode() with the special tokens of tokenizer.json's post_processor around it (as
  // transformers' add_special_tokens=True): how an embedding model's input is encoded.
  std::vector<TokenId> encode_with_special(std::string_view text) const {
    return post_processor_.apply(encode(text));
  }
  // The bytes of `ids`; added tokens as their text unless `skip_special` drops special ones.
  // Ids outside the tokenizer's vocabulary decode to nothing (a model's padding ids).
  std::string decode(const std::vector<TokenId>& ids, bool skip_special = false,
                     Decoding decoding = Decoding::whole) const;

  std::size_t vocab_size() const { return id_to_token_.size(); }
  std::optional<TokenId> token_id(std::string_view token) const;
  bool is_special(TokenId id) const;

 private:
  struct Parsed {};  // tells the constructor below from the one that parses text
  BpeTokenizer(Parsed, const nlohmann::json& root, std::string_view file);

  struct AddedToken {
    std::string content;
    TokenId id;
    bool special;
  };
  struct PairHash {
    std::size_t operator()(const std::pair<std::string, std::string>& p) const {
      return std::hash<std::string>()(p.first) * 31 + std::hash<std::string>()(p.second);
    }
  };

  void read_pre_tokenizer(const nlohmann::json& pre);
  void encode_piece(std::string_view bytes, std::vector<TokenId>& out) const;
  void encode_characters(std::string_view text, std::vector<TokenId>& out) const;
  void merge(std::vector<std::string>& symbols) const;
  void emit(const std::vector<std::string>& symbols, std::vector<TokenId>& out) const;
  void encode_ordinary(std::string_view text, bool opens_text, std::vector<TokenId>& out) const;

  std::string file_;
  std::unordered_map<std::string, TokenId> vocab_;
  std::vector<std::string> id_to_token_;  // byte-level text, or an added token's content
  std::unordered_map<std::pair<std::string, std::string>, int, PairHash> merge_rank_;
  bool ignore_merges_ = false;
  bool byte_level_ = true;  // false: SentencePiece-style character symbols
  std::array<std::optional<TokenId>, 256> byte_tokens_;  // byte_fallback's tokens, by byte
  bool fuse_unk_ = false;
  std::optional<TokenId> unk_;
  std::vector<AddedToken> added_;  // longest first, for matching
  std::vector<bool> special_;      // by id
  std::vector<bool> added_by_id_;  // by id: the text is the content, not byte-level
  bool add_prefix_space_ = false;
  bool byte_level_pre_tokenizer_ = false;
  TextNormalizer normalizer_;
  std::optional<Metaspace> metaspace_;
  std::vector<SplitRegex> splits_;  // applied in order
  TokenDecoder decoder_;  // SentencePiece-style only: byte-level decoding is built in
  PostProcessor post_processor_;
};

}  // namespace baton
