// The named bounds that keep a hostile grammar or schema from costing unbounded time or
// memory: compiling past them is a clear std::invalid_argument, never a hang.
// Thread-safety: constants.
#pragma once

#include <cstddef>
#include <cstdint>

namespace baton::grammar {

// Compilation (compiled_grammar.cpp): automaton states over all rules.
// A 50-property schema is about 7,000 states; these bounds keep the worst compile near
// 0.1 s.
inline constexpr std::size_t kMaxNfaStates = 200'000;
inline constexpr std::size_t kMaxDfaStates = 100'000;
inline constexpr std::size_t kMaxRules = 20'000;

// Matching (grammar_stacks.cpp): a stack deeper than this (JSON nested deeper than about
// this many levels) is dropped, and at most this many alternative stacks are followed.
inline constexpr std::size_t kMaxStackDepth = 512;
inline constexpr std::size_t kMaxHeads = 256;

// JSON Schema (json_schema_compiler.cpp) and patterns (regex_compiler.cpp).
inline constexpr std::size_t kMaxSchemaDepth = 128;    // nesting of subschemas, $ref included
inline constexpr std::size_t kMaxSchemaNodes = 5'000;  // subschemas and properties
inline constexpr std::size_t kMaxEnumValues = 1'024;
inline constexpr std::uint32_t kMaxRepeat = 1'000;  // {m,n}, minItems/maxItems, lengths
inline constexpr std::size_t kMaxPatternLength = 4'096;
inline constexpr std::size_t kMaxExprNodes = 1'000'000;  // expression nodes of one grammar

}  // namespace baton::grammar
