#include "baton/model/tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "baton/common/read_file.h"
#include "baton/model/files/gguf_file.h"
#include "baton/model/files/model_file_error.h"
#include "baton/model/tokenizer/byte_level.h"
#include "baton/model/tokenizer/gguf_tokenizer.h"
#include "baton/model/tokenizer/split_patterns.h"

namespace baton {
namespace {

using nlohmann::json;

// Ids index a table of max id + 1 entries, so a huge id in a tiny file would ask for
// gigabytes (or overflow). 2^22 is 16 times the largest published vocabulary (262,144).
constexpr std::int64_t kMaxTokenIds = std::int64_t{1} << 22;

bool is_token_id(const json& id) {
  return id.is_number_integer() && id.get<std::int64_t>() >= 0 &&
         id.get<std::int64_t>() < kMaxTokenIds;
}

[[noreturn]] void fail(std::string_view file, const std::string& problem) {
  throw ModelFileError(file, problem);
}

// The length of the UTF-8 character at `text[at]`; 1 for a byte that does not begin a
// whole one (invalid input is taken a byte at a time).
std::size_t character_length(std::string_view text, std::size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const std::size_t length = lead < 0x80                  ? 1
                             : lead >= 0xc2 && lead < 0xe0 ? 2
                             : lead >= 0xe0 && lead < 0xf0 ? 3
                             : lead >= 0xf0 && lead < 0xf5 ? 4
                                                           : 1;
  if (at + length > text.size()) return 1;
  for (std::size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[at + i]) & 0xc0) != 0x80) return 1;
  }
  return length;
}

// The symbols of a text: one UTF-8 character each.
std::vector<std::string> symbols_of(std::string_view text) {
  std::vector<std::string> symbols;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = character_length(text, i);
    symbols.emplace_back(text.substr(i, length));
    i += length;
  }
  return symbols;
}

// The member `key` of `object` by reference, or null: json::value() would copy the
// whole vocabulary and merge list.
const json& member(const json& object, std::string_view key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::pair<std::string, std::string> parse_merge(const json& merge, std::string_view file) {
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const auto space = text.find(' ', 1);
    if (space == std::string::npos) fail(file, "merge '" + text + "' is not two symbols");
    return {text.substr(0, space), text.substr(space + 1)};
  }
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  }
  fail(file, "a merge must be \"a b\" or [\"a\", \"b\"]");
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::string_view json_text, std::string_view file)
    : BpeTokenizer(Parsed{}, json::parse(json_text, nullptr, false), file) {}

BpeTokenizer BpeTokenizer::from_json(const json& root, std::string_view file) {
  return BpeTokenizer(Parsed{}, root, file);
}

BpeTokenizer::BpeTokenizer(Parsed, const json& root, std::string_view file) : file_(file) {
  if (root.is_discarded() || !root.is_object()) fail(file, "is not a JSON object");
  const json& model = member(root, "model");
  if (!model.is_object() || model.value("type", "") != "BPE") {
    fail(file, "model.type must be BPE (WordPiece and Unigram tokenizers are not supported)");
  }
  const json& vocab = member(model, "vocab");
  if (!vocab.is_object()) fail(file, "model.vocab must be an object");
  TokenId max_id = -1;
  for (const auto& [token, id] : vocab.items()) {
    if (!is_token_id(id)) fail(file, "vocab id of '" + token + "' is not a token id");
    vocab_[token] = id.get<TokenId>();
    max_id = std::max(max_id, id.get<TokenId>());
  }
  const json& merges = member(model, "merges");
  if (!merges.is_null() && !merges.is_array()) fail(file, "model.merges must be a list");
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    merge_rank_.emplace(parse_merge(merges[rank], file), static_cast<int>(rank));
  }
  ignore_merges_ = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    unk_ = token_id(model["unk_token"].get<std::string>());
  }

  const json& added = member(root, "added_tokens");
  for (const json& t : added) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() ||
        !t.contains("content") || !t["content"].is_string()) {
      fail(file, "an added token needs an integer id and a string content");
    }
    if (!is_token_id(t["id"])) fail(file, "an added token's id is not a token id");
    const TokenId id = t["id"].get<TokenId>();
    added_.push_back({.content = t["content"].get<std::string>(),
                      .id = id,
                      .special = t.value("special", false)});
    max_id = std::max(max_id, id);
  }
  std::sort(added_.begin(), added_.end(), [](const AddedToken& a, const AddedToken& b) {
    return a.content.size() > b.content.size();
  });

  id_to_token_.resize(static_cast<std::size_t>(max_id + 1));
  special_.assign(id_to_token_.size(), false);
  added_by_id_.assign(id_to_token_.size(), false);
  for (const auto& [token, id] : vocab_) id_to_token_[id] = token;
  for (const AddedToken& t : added_) {
    id_to_token_[t.id] = t.content;
    special_[t.id] = t.special;
    added_by_id_[t.id] = true;
  }

  post_processor_ = read_post_processor(member(root, "post_processor"), file);
  for (const std::vector<TokenId>* side : {&post_processor_.before, &post_processor_.after}) {
    for (const TokenId id : *side) {
      if (static_cast<std::size_t>(id) >= id_to_token_.size()) {
        fail(file, "post_processor: id " + std::to_string(id) + " is outside the vocabulary");
      }
    }
  }
  normalizer_ = TextNormalizer::read(member(root, "normalizer"), file);
  read_pre_tokenizer(member(root, "pre_tokenizer"));
  // SentencePiece-style files say so by byte fallback, by Metaspace, or by a decoder
  // without ByteLevel; the rest are byte-level, whose decoding is built in.
  const json& decoder = member(root, "decoder");
  const bool decoder_is_byte_level =
      decoder.is_null() || decoder.dump().find(R"("ByteLevel")") != std::string::npos;
  // byte_fallback: the "<0xNN>" token of each byte the vocabulary has.
  const bool byte_fallback = model.value("byte_fallback", false);
  if (byte_fallback) {
    for (int byte = 0; byte < 256; ++byte) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      if (auto it = vocab_.find(name); it != vocab_.end()) byte_tokens_[byte] = it->second;
    }
  }
  fuse_unk_ = model.value("fuse_unk", false);
  if (byte_fallback || metaspace_ || !decoder_is_byte_level) {
    if (byte_level_pre_tokenizer_) fail(file, "mixes ByteLevel with SentencePiece-style steps");
    byte_level_ = false;
    decoder_ = TokenDecoder::read(decoder, file);
  }
}

void BpeTokenizer::read_pre_tokenizer(const json& pre) {
  std::vector<const json*> steps;
  if (pre.is_object() && pre.value("type", "") == "Sequence") {
    for (const json& step : member(pre, "pretokenizers")) steps.push_back(&step);
  } else if (!pre.is_null()) {
    steps.push_back(&pre);
  }
  for (const json* step_ptr : steps) {
    const json& step = *step_ptr;
    const std::string type = step.value("type", "");
    if (type == "Split") {
      const json& pattern = member(step, "pattern");
      if (step.value("behavior", "") != "Isolated" || step.value("invert", false) ||
          !pattern.contains("Regex") || !pattern["Regex"].is_string()) {
        fail(file_,
             "only Split with a Regex pattern, behavior Isolated and no invert is supported");
      }
      try {
        splits_.emplace_back(pattern["Regex"].get<std::string>());
      } catch (const std::invalid_argument& e) {
        fail(file_, e.what());
      }
    } else if (type == "ByteLevel") {
      byte_level_pre_tokenizer_ = true;
      add_prefix_space_ = step.value("add_prefix_space", false);
      if (step.value("use_regex", true)) splits_.emplace_back(kGpt2Pattern);
    } else if (type == "Metaspace") {
      metaspace_ = Metaspace::read(step, file_);
    } else {
      fail(file_, "pre-tokenizer '" + type + "' is not supported");
    }
  }
}

BpeTokenizer BpeTokenizer::from_source(const ModelSource& source) {
  if (const GgufFile* gguf = source.gguf()) {
    const std::string name = gguf->path().string();
    return from_json(gguf_tokenizer_json(gguf->header(), name), name);
  }
  const std::filesystem::path path = source.file("tokenizer.json");
  std::string text;
  try {
    text = read_file(path);
  } catch (const FileReadError& error) {
    throw ModelFileError(path.string(), "cannot be read (" + error.reason() + "): no tokenizer");
  }
  return BpeTokenizer(text, path.string());
}

std::optional<TokenId> BpeTokenizer::token_id(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it != vocab_.end()) return it->second;
  for (const AddedToken& t : added_) {
    if (t.content == token) return t.id;
  }
  return std::nullopt;
}

bool BpeTokenizer::is_special(TokenId id) const {
  return id >= 0 && static_cast<std::size_t>(id) < special_.size() && special_[id];
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> out;
  std::size_t at = 0;
  while (at < text.size()) {
    // The earliest added token from here on; the longest where two start together.
    std::size_t found = std::string_view::npos;
    const AddedToken* which = nullptr;
    for (const AddedToken& t : added_) {
      const std::size_t pos = t.content.empty() ? std::string_view::npos : text.find(t.content, at);
      if (pos < found) {
        found = pos;
        which = &t;
      }
    }
    encode_ordinary(text.substr(at, found == std::string_view::npos ? text.npos : found - at),
                    at == 0, out);
    if (which == nullptr) break;
    out.push_back(which->id);
    at = found + which->content.size();
  }
  return out;
}

void BpeTokenizer::encode_ordinary(std::string_view raw, bool opens_text,
                                   std::vector<TokenId>& out) const {
  if (raw.empty()) return;
  std::string text = normalizer_.apply(raw);
  if (add_prefix_space_ && !text.empty() && text.front() != ' ') text.insert(0, " ");
  std::vector<std::string> pieces;
  if (metaspace_) {
    pieces = metaspace_->pre_tokenize(text, opens_text);
  } else {
    pieces.push_back(std::move(text));
  }
  for (const SplitRegex& split : splits_) {
    std::vector<std::string> next;
    for (const std::string& piece : pieces) {
      for (std::string_view part : split.split(piece)) next.emplace_back(part);
    }
    pieces = std::move(next);
  }
  for (const std::string& piece : pieces) {
    if (byte_level_) {
      encode_piece(piece, out);
    } else {
      encode_characters(piece, out);
    }
  }
}

void BpeTokenizer::encode_piece(std::string_view bytes, std::vector<TokenId>& out) const {
  const std::string text = to_byte_level(bytes);
  if (ignore_merges_) {
    if (auto it = vocab_.find(text); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<std::string> symbols = symbols_of(text);
  merge(symbols);
  emit(symbols, out);
}

void BpeTokenizer::encode_characters(std::string_view text, std::vector<TokenId>& out) const {
  if (text.empty()) return;
  if (ignore_merges_) {
    if (auto it = vocab_.find(std::string(text)); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // A character outside the vocabulary cannot take part in a merge, so the runs of
  // known characters between such characters merge on their own.
  std::vector<std::string> run;
  bool after_unk = false;
  for (std::string& symbol : symbols_of(text)) {
    if (vocab_.contains(symbol)) {
      run.push_back(std::move(symbol));
      continue;
    }
    merge(run);
    emit(run, out);
    if (!run.empty()) after_unk = false;
    run.clear();
    std::vector<TokenId> bytes;
    for (const char byte : symbol) {
      if (auto id = byte_tokens_[static_cast<unsigned char>(byte)]) bytes.push_back(*id);
    }
    if (bytes.size() == symbol.size()) {
      out.insert(out.end(), bytes.begin(), bytes.end());
      after_unk = false;
    } else if (!(fuse_unk_ && after_unk)) {
      emit({symbol}, out);  // the unknown token, or the error that there is none
      after_unk = true;
    }
  }
  merge(run);
  emit(run, out);
}

void BpeTokenizer::merge(std::vector<std::string>& symbols) const {
  for (;;) {
    int best = INT_MAX;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merge_rank_.find({symbols[i], symbols[i + 1]});
      if (it != merge_rank_.end()) best = std::min(best, it->second);
    }
    if (best == INT_MAX) break;
    std::vector<std::string> merged;
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size()) {
        auto it = merge_rank_.find({symbols[i], symbols[i + 1]});
        if (it != merge_rank_.end() && it->second == best) {
          merged.push_back(symbols[i] + symbols[i + 1]);
          ++i;
          continue;
        }
      }
      merged.push_back(std::move(symbols[i]));
    }
    symbols = std::move(merged);
  }
}

void BpeTokenizer::emit(const std::vector<std::string>& symbols, std::vector<TokenId>& out) const {
  for (const std::string& symbol : symbols) {
    auto it = vocab_.find(symbol);
    if (it != vocab_.end()) {
      out.push_back(it->second);
    } else if (unk_) {
      out.push_back(*unk_);
    } else {
      throw ModelFileError(file_, "symbol '" + symbol +
                                      "' is not in the vocabulary and there is no unk_token");
    }
  }
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids, bool skip_special,
                                 Decoding decoding) const {
  std::string out;
  std::vector<std::string> tokens;
  for (TokenId id : ids) {
    // As Hugging Face's tokenizers: an id the tokenizer lacks (models pad their embedding
    // past it) decodes to nothing.
    if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size()) continue;
    if (skip_special && special_[id]) continue;
    if (!byte_level_) {
      tokens.push_back(id_to_token_[id]);
    } else if (added_by_id_[id]) {
      out += id_to_token_[id];
    } else {
      const std::optional<std::string> bytes = from_byte_level(id_to_token_[id]);
      out += bytes ? *bytes : id_to_token_[id];
    }
  }
  if (byte_level_) return out;
  return decoder_.decode(std::move(tokens), decoding == Decoding::continuation);
}

}  // namespace baton
