// A context-free grammar over bytes, as the builders and the JSON Schema compiler write it:
// named rules whose bodies are expressions of byte sets, sequences, choices, bounded or
// unbounded repetition and references to rules (recursion allowed, left recursion refused
// when compiled). CompiledGrammar (compiled_grammar.h) turns it into what the matcher runs.
// Thread-safety: a Grammar is a plain value; build it on one thread, then share it read-only.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace baton::grammar {

using ByteSet = std::bitset<256>;
using RuleId = std::uint32_t;
inline constexpr std::uint32_t kUnbounded = std::numeric_limits<std::uint32_t>::max();

// One node of a rule's body. An empty sequence matches the empty string; an empty choice
// matches nothing.
struct Expr {
  enum class Kind : std::uint8_t { bytes, sequence, choice, repeat, rule };
  Kind kind = Kind::sequence;
  ByteSet set;              // bytes: one byte from the set
  std::vector<Expr> items;  // sequence, choice; a repeat's body is items[0]
  std::uint32_t min = 0;    // repeat: at least min times
  std::uint32_t max = 0;    // repeat: at most max times (kUnbounded: no limit)
  RuleId rule = 0;          // rule: a reference to a rule of the same Grammar
};

Expr empty();
Expr bytes(const ByteSet& set);
Expr byte_range(unsigned char lo, unsigned char hi);
Expr byte_of(unsigned char b);
// One byte from `chars` (each char of the string is a member).
Expr any_of(std::string_view chars);
Expr literal(std::string_view text);
Expr sequence(std::vector<Expr> items);
Expr choice(std::vector<Expr> items);
// `body` between min and max times (max kUnbounded: no limit). Throws std::invalid_argument
// when min > max.
Expr repeat(Expr body, std::uint32_t min, std::uint32_t max);
Expr optional(Expr body);
Expr star(Expr body);
Expr plus(Expr body);
Expr ref(RuleId rule);

// Nodes in an expression tree (what the size limits count).
std::size_t expr_size(const Expr& e);

class Grammar {
 public:
  // A new rule, to be defined later (so rules may refer to each other). Names are for
  // messages and find_rule; a name already taken gets a numbered suffix.
  RuleId declare(std::string_view name);
  void define(RuleId rule, Expr body);
  // declare + define.
  RuleId add_rule(std::string_view name, Expr body);
  // The rule of that exact name, if declared.
  std::optional<RuleId> find_rule(std::string_view name) const;

  std::size_t rule_count() const { return names_.size(); }
  const std::string& name(RuleId rule) const { return names_.at(rule); }
  // Throws std::invalid_argument for a rule declared but never defined.
  const Expr& body(RuleId rule) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<Expr>> bodies_;
  std::unordered_map<std::string, RuleId> by_name_;
  std::unordered_map<std::string, int> next_suffix_;  // per name asked for
};

}  // namespace baton::grammar
