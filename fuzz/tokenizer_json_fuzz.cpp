// libFuzzer target: arbitrary bytes as the text of a tokenizer.json, into BpeTokenizer.
// ModelFileError is the expected answer to a bad file, and any other std::exception from
// loading or encoding (a JSON value of the wrong type, a pattern PCRE2 gives up on, a
// symbol missing from the vocabulary) is a clean refusal too. A crash, a hang, a sanitizer
// report, or a loaded tokenizer that breaks its contract (checked below) is a bug.
// When the file loads, a fixed string and the first bytes of the input are encoded: every
// id must lie inside the vocabulary, and decode must take them without throwing.
// Round trips are not required here: a fuzzed file may map two tokens to one id, lack
// byte symbols, or add a prefix space; the tokenizer's tests check them on real files.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <vector>

#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/model/files/model_file_error.h"

namespace {

// Ordinary text, special tokens of two families, and bytes that are not UTF-8.
constexpr std::string_view kFixed =
    "Hello, world! It's 2024 <|im_start|>user\n caf\xc3\xa9 \xf0\x9f\x99\x82<|eot_id|> \xff\xfe";
constexpr std::size_t kPieceBytes = 256;

void require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "tokenizer_json_fuzz: broken contract: %s\n", what);
  std::abort();
}

void encode_and_decode(const baton::BpeTokenizer& tokenizer, std::string_view text) {
  std::vector<baton::TokenId> ids;
  try {
    ids = tokenizer.encode_with_special(text);  // encode() and the post-processor's ids
  } catch (const std::exception&) {
    return;
  }
  for (const baton::TokenId id : ids) {
    require(id >= 0 && static_cast<std::size_t>(id) < tokenizer.vocab_size(), "ids in vocab");
  }
  (void)tokenizer.decode(ids);
  (void)tokenizer.decode(ids, /*skip_special=*/true);
  (void)tokenizer.decode(ids, false, baton::BpeTokenizer::Decoding::continuation);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const baton::BpeTokenizer tokenizer(input, "fuzz.json");
    encode_and_decode(tokenizer, kFixed);
    encode_and_decode(tokenizer, input.substr(0, kPieceBytes));
  } catch (const baton::ModelFileError& error) {
    require(std::string_view(error.what()).starts_with("fuzz.json: "),
            "a message starts with the file");
  } catch (const std::exception&) {
    // nlohmann::json::type_error and the like from the constructor: a refusal.
  }
  return 0;
}
