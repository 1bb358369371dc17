// libFuzzer target: arbitrary bytes as a JSON Schema, compiled to a grammar, then a few
// random steps of the matcher (bytes drawn from its own masks, seeded by the input). A
// std::invalid_argument (SchemaError, GrammarError) is the expected answer to a schema it
// refuses; a crash, a hang, a sanitizer report, another exception, or a mask that allows a
// byte the matcher then refuses is a bug.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/grammar/grammar_matcher.h"
#include "baton/grammar/json_schema.h"

namespace {

// Every byte a token, and an end of sequence (id 256).
const std::shared_ptr<const baton::grammar::TokenVocabulary>& byte_vocabulary() {
  static const auto kVocabulary = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    tokens.emplace_back("");
    return std::make_shared<const baton::grammar::TokenVocabulary>(
        std::move(tokens), std::vector<baton::grammar::TokenIndex>{256});
  }();
  return kVocabulary;
}

void walk(const std::shared_ptr<const baton::grammar::CompiledGrammar>& grammar,
          std::uint64_t seed) {
  baton::grammar::MaskCache cache(grammar, byte_vocabulary());
  baton::grammar::GrammarMatcher matcher(grammar);
  std::vector<std::uint32_t> mask(byte_vocabulary()->mask_words());
  for (int step = 0; step < 48; ++step) {
    matcher.fill_mask(cache, mask);
    const bool eos = (mask[256 / 32] >> (256 % 32)) & 1u;
    if (eos != matcher.can_end()) {
      std::fprintf(stderr, "json_schema_fuzz: end-of-sequence bit disagrees with can_end\n");
      std::abort();
    }
    std::vector<unsigned> allowed;
    for (unsigned b = 0; b < 256; ++b)
      if ((mask[b / 32] >> (b % 32)) & 1u) allowed.push_back(b);
    if (allowed.empty()) return;
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const unsigned b = allowed[(seed >> 33) % allowed.size()];
    if (!matcher.accept_bytes(std::string(1, static_cast<char>(b)))) {
      std::fprintf(stderr, "json_schema_fuzz: the mask allowed byte %u, the matcher refused it\n",
                   b);
      std::abort();
    }
    if ((seed >> 20) % 16 == 0 && matcher.steps() > 0) matcher.rollback(1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  std::uint64_t seed = 14695981039346656037ULL;
  for (const char c : text) seed = (seed ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  try {
    walk(baton::grammar::compile_json_schema(schema), seed);
  } catch (const std::invalid_argument&) {
  } catch (const std::exception& error) {
    std::fprintf(stderr, "json_schema_fuzz: not an invalid_argument: %s\n", error.what());
    std::abort();
  }
  return 0;
}
