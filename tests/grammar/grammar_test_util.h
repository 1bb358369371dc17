// What the grammar tests share: the vocabulary of tests/data/tokenizers/llama3_style as
// token bytes (byte-level BPE decoded here, so the tests need no tokenizer), the
// brute-force mask a fast mask must equal, random walks that sample from masks, and a
// python3 subprocess that judges many strings at once.
// Thread-safety: pure functions (the subprocess is one per call).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "baton/grammar/grammar_matcher.h"
#include "baton/grammar/mask_cache.h"
#include "baton/grammar/token_vocabulary.h"
#include "temp_dir.h"

namespace baton::grammar::testing {

// GPT-2's byte-level alphabet: the printable character that stands for each byte.
inline std::map<std::string, unsigned char> byte_level_alphabet() {
  std::map<std::string, unsigned char> out;
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    const int cp = printable ? b : 256 + extra++;
    std::string utf8;
    if (cp < 0x80) {
      utf8 += static_cast<char>(cp);
    } else {
      utf8 += static_cast<char>(0xC0 | (cp >> 6));
      utf8 += static_cast<char>(0x80 | (cp & 0x3F));
    }
    out[utf8] = static_cast<unsigned char>(b);
  }
  return out;
}

// Token i's bytes; special (added) tokens are "" (never allowed).
inline std::vector<std::string> llama3_token_bytes() {
  std::ifstream in(std::filesystem::path(BATON_TEST_DATA) /
                   "tokenizers/llama3_style/tokenizer.json");
  const nlohmann::json root = nlohmann::json::parse(in);
  const auto alphabet = byte_level_alphabet();
  std::vector<std::string> tokens;
  for (const auto& [text, id] : root["model"]["vocab"].items()) {
    const std::string piece = text;
    std::string bytes;
    for (std::size_t i = 0; i < piece.size();) {
      const std::size_t n = (static_cast<unsigned char>(piece[i]) < 0x80) ? 1 : 2;
      bytes += static_cast<char>(alphabet.at(piece.substr(i, n)));
      i += n;
    }
    const auto index = id.get<std::size_t>();
    if (tokens.size() <= index) tokens.resize(index + 1);
    tokens[index] = bytes;
  }
  for (const auto& added : root["added_tokens"]) {
    const auto index = added["id"].get<std::size_t>();
    if (tokens.size() <= index) tokens.resize(index + 1);
    tokens[index] = "";
  }
  return tokens;
}

// The llama3_style tokens, plus every single byte and some JSON-ish pieces, so that any
// output can be spelled; the last token is the end of sequence.
inline std::shared_ptr<const TokenVocabulary> test_vocabulary() {
  std::vector<std::string> tokens = llama3_token_bytes();
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  for (const char* piece :
       {"{\"", "\":",   "\": ", "\",",  "\", \"", "\"}",      "}}",           "[]",
        "{}",  "\"\"",  "null", "true", "false",  "12",       "0.",           "-1",
        "e+",  "\\u00", "\\n",  ", ",   "\n  ",   "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98"})
    tokens.emplace_back(piece);
  tokens.emplace_back("");  // end of sequence
  const auto eos = static_cast<TokenIndex>(tokens.size() - 1);
  return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<TokenIndex>{eos});
}

// Every single byte, and an end of sequence: masks over it are the bytes allowed next.
inline std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  tokens.emplace_back("");
  return std::make_shared<const TokenVocabulary>(std::move(tokens), std::vector<TokenIndex>{256});
}

inline bool mask_bit(const std::vector<std::uint32_t>& mask, std::size_t token) {
  return (mask[token / 32] >> (token % 32)) & 1u;
}

// Bit i: a fresh copy of the matcher accepts token i.
inline std::vector<std::uint32_t> brute_force_mask(const GrammarMatcher& matcher,
                                                   const TokenVocabulary& vocabulary) {
  std::vector<std::uint32_t> mask(vocabulary.mask_words(), 0);
  for (TokenIndex t = 0; t < vocabulary.size(); ++t) {
    GrammarMatcher copy = matcher;
    if (copy.accept_token(t, vocabulary)) mask[t / 32] |= 1u << (t % 32);
  }
  return mask;
}

// Samples tokens from the masks until the end-of-sequence token (which gets more likely as
// the output grows) or `max_tokens`; returns the output's bytes, or nullopt when it could
// not end in time.
inline std::optional<std::string> random_walk(GrammarMatcher matcher, MaskCache& cache,
                                              std::mt19937& rng, std::size_t max_tokens) {
  const TokenVocabulary& vocabulary = cache.vocabulary();
  std::vector<std::uint32_t> mask(vocabulary.mask_words());
  std::string out;
  for (std::size_t step = 0; step < max_tokens; ++step) {
    matcher.fill_mask(cache, mask);
    std::vector<TokenIndex> allowed;
    for (TokenIndex t = 0; t < vocabulary.size(); ++t)
      if (mask_bit(mask, t)) allowed.push_back(t);
    if (allowed.empty()) return std::nullopt;
    const bool may_end = matcher.can_end();
    if (may_end && std::uniform_int_distribution<std::size_t>(0, 99)(rng) < 20 + step / 4) break;
    const TokenIndex t =
        allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(rng)];
    if (vocabulary.is_end_of_sequence(t)) break;
    EXPECT_TRUE(matcher.accept_token(t, vocabulary));
    out += vocabulary.token_bytes(t);
  }
  if (!matcher.can_end()) return std::nullopt;
  return out;
}

// The first Python 3 that has jsonschema: the one on PATH (this machine's image has it), or
// Debian's, which scripts/setup gives python3-jsonschema.
inline std::string python_with_jsonschema() {
  static const std::string chosen = [] {
    for (const std::string candidate : {"python3", "/usr/bin/python3"}) {
      const std::string probe = candidate + " -c 'import jsonschema' >/dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) return candidate;
    }
    return std::string("python3");  // fails below with Python's own message
  }();
  return chosen;
}

// Runs `script` with python3 on a file of `lines` (one JSON value per line); returns its
// standard output.
inline std::string run_python(const std::string& script, const std::vector<nlohmann::json>& lines) {
  baton::testing::TempDir dir;
  const auto input = dir.path() / "input.jsonl";
  const auto program = dir.path() / "check.py";
  const auto output = dir.path() / "output.txt";
  {
    std::ofstream in(input);
    for (const auto& line : lines)
      in << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    std::ofstream(program) << script;
  }
  const std::string command =
      python_with_jsonschema() + " " + program.string() + " " + input.string() + " > " +
      output.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream out(output);
  std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << text;
  return text;
}

}  // namespace baton::grammar::testing
