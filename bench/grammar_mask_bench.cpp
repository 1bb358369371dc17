// The grammar engine's cost per decoding step (src/baton/grammar): token masks over a
// vocabulary of Llama 3's size (128,256 tokens, synthetic: every byte, numbers, JSON
// punctuation, runs of spaces and newlines, and random words with and without a leading
// space, UTF-8 words among them; lengths 1-16 bytes, mean about 6.5, as Llama 3's), for a
// 20-property schema, and the compile time of a 50-property schema.
// Usage: grammar_mask_bench. Prints microseconds per mask in three states (inside a
// string, between properties, inside a number), cold (first time, computing the cached
// state masks) and warm (mean of 200), the mean per token over a whole answer (fill mask +
// accept token; first answer and a second one sharing the cache), and compile times (from
// nothing, and with the automata of strings and numbers kept, as a server keeps them).
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "baton/grammar/grammar_matcher.h"
#include "baton/grammar/json_schema.h"
#include "baton/grammar/rule_dfa_cache.h"

namespace {

using baton::grammar::GrammarMatcher;
using baton::grammar::MaskCache;
using baton::grammar::TokenIndex;
using baton::grammar::TokenVocabulary;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

std::shared_ptr<const TokenVocabulary> synthetic_vocabulary(std::size_t size) {
  std::vector<std::string> tokens;
  std::unordered_set<std::string> seen;
  const auto add = [&](std::string t) {
    if (tokens.size() < size && seen.insert(t).second) tokens.push_back(std::move(t));
  };
  for (int b = 0; b < 256; ++b) add(std::string(1, static_cast<char>(b)));
  for (int n = 0; n < 1000; ++n) add(std::to_string(n));
  for (const char* p :
       {"{\"",  "\":",  "\": ", "\",",   "\", \"", "\"}", "}}",  "[]",  "{}",   "\"\"", "\":\"",
        "\"],", "null", "true", "false", ", ",     ",\n", ".\n", "\\n", "\\\"", "://"})
    add(p);
  for (int n = 1; n <= 16; ++n) {
    add(std::string(static_cast<std::size_t>(n), ' '));
    add("\n" + std::string(static_cast<std::size_t>(n - 1), ' '));
  }
  std::mt19937 rng(5);
  const std::string letters = "etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ";
  const std::vector<std::string> accented = {"\xc3\xa9",     "\xc3\xbc", "\xc3\xa0", "\xe4\xb8\xad",
                                             "\xe6\x96\x87", "\xd0\xb0", "\xd0\xbe"};
  std::geometric_distribution<int> word_length(0.2);
  while (tokens.size() < size) {
    std::string t = rng() % 10 < 6 ? " " : "";
    const int n = std::min(1 + word_length(rng), 15);
    for (int i = 0; i < n; ++i)
      t += rng() % 40 == 0 ? accented[rng() % accented.size()]
                           : std::string(1, letters[rng() % (i == 0 ? letters.size() : 26)]);
    if (rng() % 30 == 0) t += rng() % 2 ? "\"" : ",";
    add(t);
  }
  tokens.emplace_back("");  // end of sequence
  return std::make_shared<const TokenVocabulary>(
      std::move(tokens), std::vector<TokenIndex>{static_cast<TokenIndex>(size)});
}

Json schema_of(int properties) {
  Json props = Json::object();
  Json required = Json::array();
  for (int i = 0; i < properties; ++i) {
    const std::string name = "field_" + std::to_string(i);
    switch (i % 5) {
      case 0:
        props[name] = {{"type", "string"}, {"description", "a name"}};
        break;
      case 1:
        props[name] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}};
        break;
      case 2:
        props[name] = {{"type", "number"}};
        break;
      case 3:
        props[name] = {{"enum", {"small", "medium", "large"}}};
        break;
      default:
        props[name] = {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 8}};
    }
    if (i % 3 != 2) required.push_back(name);
  }
  return {{"type", "object"},
          {"properties", props},
          {"required", required},
          {"additionalProperties", false}};
}

// Greedy longest-match tokenization, good enough to replay an answer token by token.
std::vector<TokenIndex> tokenize(const std::string& text, const TokenVocabulary& vocabulary) {
  std::unordered_map<std::string, TokenIndex> ids;
  for (TokenIndex t = 0; t < vocabulary.size(); ++t)
    if (!vocabulary.token_bytes(t).empty()) ids.emplace(vocabulary.token_bytes(t), t);
  std::vector<TokenIndex> out;
  for (std::size_t at = 0; at < text.size();) {
    for (std::size_t n = std::min<std::size_t>(16, text.size() - at); n > 0; --n)
      if (const auto it = ids.find(text.substr(at, n)); it != ids.end()) {
        out.push_back(it->second);
        at += n;
        break;
      }
  }
  return out;
}

// Masks in the state after `prefix`: the first one (cold) and the mean of 200 more.
void state_row(const char* name,
               const std::shared_ptr<const baton::grammar::CompiledGrammar>& grammar,
               const std::shared_ptr<const TokenVocabulary>& vocabulary,
               const std::string& prefix) {
  MaskCache cache(grammar, vocabulary);
  GrammarMatcher matcher(grammar);
  if (!matcher.accept_bytes(prefix)) std::printf("prefix refused: %s\n", prefix.c_str());
  std::vector<std::uint32_t> mask(vocabulary->mask_words());
  auto start = Clock::now();
  matcher.fill_mask(cache, mask);
  const double cold = micros_since(start);
  constexpr int kRuns = 200;
  start = Clock::now();
  for (int i = 0; i < kRuns; ++i) matcher.fill_mask(cache, mask);
  const double warm = micros_since(start) / kRuns;
  std::size_t allowed = 0;
  for (const std::uint32_t w : mask) allowed += static_cast<std::size_t>(__builtin_popcount(w));
  std::printf("%-34s %10.1f %10.1f %10zu\n", name, cold, warm, allowed);
}

}  // namespace

int main() {
  auto start = Clock::now();
  const auto vocabulary = synthetic_vocabulary(128'256);
  std::printf(
      "grammar_mask_bench: synthetic vocabulary of %zu tokens, trie of %zu nodes, built in %.0f "
      "ms\n\n",
      vocabulary->size(), vocabulary->nodes().size(), micros_since(start) / 1000);
  const auto grammar = baton::grammar::compile_json_schema(schema_of(20));
  std::printf("20-property schema: %zu automaton states\n\n", grammar->state_count());
  std::printf("%-34s %10s %10s %10s\n", "state (20 properties)", "cold us", "warm us", "allowed");
  state_row("inside a string", grammar, vocabulary, "{\"field_0\": \"hello wor");
  state_row("between properties", grammar, vocabulary, "{\"field_0\": \"hello\", ");
  state_row("inside a number", grammar, vocabulary, "{\"field_0\": \"hello\", \"field_1\": 12");
  state_row("start", grammar, vocabulary, "");
  {  // A second schema's first string mask, with masks shared per vocabulary (SharedMasks).
    const auto shared = std::make_shared<baton::grammar::SharedMasks>();
    std::vector<std::uint32_t> mask(vocabulary->mask_words());
    for (const int properties : {20, 21}) {
      const auto g = baton::grammar::compile_json_schema(schema_of(properties));
      MaskCache cache(g, vocabulary, shared);
      GrammarMatcher matcher(g);
      (void)matcher.accept_bytes("{\"field_0\": \"hello wor");
      start = Clock::now();
      matcher.fill_mask(cache, mask);
      std::printf("%-34s %10.1f\n",
                  properties == 20 ? "inside a string, shared, 1st schema"
                                   : "inside a string, shared, 2nd schema",
                  micros_since(start));
    }
  }

  std::string answer = "{";
  for (int i = 0; i < 20; ++i) {
    if (i % 3 == 2 && i % 2 == 0) continue;
    answer += i == 0 ? "" : ", ";
    answer += "\"field_" + std::to_string(i) + "\": ";
    switch (i % 5) {
      case 0:
        answer +=
            "\"The quick brown fox jumps over the lazy dog, " + std::to_string(i) + " times\"";
        break;
      case 1:
        answer += std::to_string(1234 * i);
        break;
      case 2:
        answer += "-12.75";
        break;
      case 3:
        answer += "\"medium\"";
        break;
      default:
        answer += "[\"alpha\", \"beta gamma\"]";
    }
  }
  answer += "}";
  const std::vector<TokenIndex> tokens = tokenize(answer, *vocabulary);
  MaskCache cache(grammar, vocabulary);
  std::vector<std::uint32_t> mask(vocabulary->mask_words());
  std::printf("\n%-34s %10s %10s\n", "whole answer", "us/token", "max us");
  for (const char* pass : {"first answer (cold cache)", "second answer (warm cache)"}) {
    GrammarMatcher matcher(grammar);
    double worst = 0;
    start = Clock::now();
    for (const TokenIndex t : tokens) {
      const auto step = Clock::now();
      matcher.fill_mask(cache, mask);
      if (((mask[t / 32] >> (t % 32)) & 1u) == 0 || !matcher.accept_token(t, *vocabulary)) {
        std::printf("token refused: '%s'\n", std::string(vocabulary->token_bytes(t)).c_str());
        return 1;
      }
      worst = std::max(worst, micros_since(step));
    }
    std::printf("%-34s %10.1f %10.1f\n", pass,
                micros_since(start) / static_cast<double>(tokens.size()), worst);
  }
  std::printf("(%zu tokens, %zu bytes)\n\n", tokens.size(), answer.size());

  for (const int properties : {20, 50}) {
    const Json schema = schema_of(properties);
    constexpr int kRuns = 20;
    start = Clock::now();
    std::size_t states = 0;
    for (int i = 0; i < kRuns; ++i)
      states = baton::grammar::compile_json_schema(schema)->state_count();
    std::printf("compile, %d properties: %8.2f ms (%zu states)\n", properties,
                micros_since(start) / 1000 / kRuns, states);
    // As the server compiles: the automata of strings and numbers kept from the first run,
    // the object around them (its property names) compiled each time.
    baton::grammar::RuleDfaCache kept;
    double first_ms = 0.0;
    start = Clock::now();
    for (int i = 0; i < kRuns; ++i) {
      const auto run = Clock::now();
      baton::grammar::Grammar rules;
      baton::grammar::Expr root = baton::grammar::json_schema_value(rules, schema);
      (void)baton::grammar::CompiledGrammar::compile_expr(std::move(rules), std::move(root), &kept);
      if (i == 0) first_ms = micros_since(run) / 1000;
    }
    std::printf("compile, %d properties, automata kept: %8.2f ms (the first %.2f ms)\n", properties,
                (micros_since(start) / 1000 - first_ms) / (kRuns - 1), first_ms);
  }
  return 0;
}
