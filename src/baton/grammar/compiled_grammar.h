// A Grammar compiled for matching: every rule becomes a deterministic automaton whose edges
// read a byte (through the rule's byte classes) or call another rule and return to a state.
// The matcher keeps stacks of these states (grammar_stacks.h). Compiling checks the bounds
// of grammar_limits.h and refuses left recursion (a rule that can call itself before
// reading a byte), which no stack machine could run.
// Thread-safety: immutable after construction; share it (shared_ptr<const>) freely.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

using StateId = std::uint32_t;
inline constexpr StateId kNoState = 0xFFFFFFFFu;

// A grammar past a size bound, or one no stack machine can run (left recursion, an
// undefined rule). Bad client input: the server answers 400.
class GrammarError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class RuleDfaCache;

struct RuleCall {
  RuleId rule = 0;
  StateId return_to = kNoState;  // the caller's state once the rule has matched
};

class CompiledGrammar {
 public:
  // Compiles the rules reachable from `root`. Throws GrammarError. With a `cache`, the
  // automata of leaf rules come from it and go to it (the bounds are charged alike).
  static std::shared_ptr<const CompiledGrammar> compile(const Grammar& grammar, RuleId root,
                                                        RuleDfaCache* cache = nullptr);
  // Compiles `root` as a new rule of (a copy of) `grammar`.
  static std::shared_ptr<const CompiledGrammar> compile_expr(Grammar grammar, Expr root,
                                                             RuleDfaCache* cache = nullptr);

  StateId root_start() const { return rule_start_[root_]; }
  StateId rule_start(RuleId rule) const { return rule_start_[rule]; }
  std::size_t state_count() const { return accepting_.size(); }
  std::size_t rule_count() const { return rule_start_.size(); }
  // The state after reading `byte` in `state`, or kNoState.
  StateId next(StateId state, unsigned char byte) const {
    return next_[row_[state] + classes_[class_map_[state]][byte]];
  }
  // A state's transitions, for a walk that steps many bytes from it: next[classes[byte]].
  struct Row {
    const StateId* next;
    const std::uint8_t* classes;
  };
  Row row(StateId state) const {
    return {.next = next_.data() + row_[state], .classes = classes_[class_map_[state]].data()};
  }
  // The rule may end (return to its caller) in this state.
  bool accepting(StateId state) const { return accepting_[state] != 0; }
  bool reads_bytes(StateId state) const { return reads_bytes_[state] != 0; }
  std::span<const RuleCall> calls(StateId state) const {
    return {calls_.data() + call_begin_[state], calls_.data() + call_begin_[state + 1]};
  }
  const std::string& rule_name(RuleId rule) const { return rule_names_[rule]; }
  // What a state's tokens depend on, when that is its own rule alone: the spelling of a
  // rule that calls no other (leaf_key), and the state's index in its automaton. Equal
  // signatures and indices read the same tokens, in any grammar; "" for other rules.
  const std::string& signature(StateId state) const { return rule_signature_[state_rule_[state]]; }
  std::uint32_t index_in_rule(StateId state) const {
    return state - rule_start_[state_rule_[state]];
  }
  // The state's rule calls no other: its walks need no stacks (mask_cache.cpp).
  bool in_leaf_rule(StateId state) const { return !signature(state).empty(); }

 private:
  CompiledGrammar() = default;
  void reserve(std::size_t states, std::size_t transitions);
  void append_rule(RuleId rule, const struct RuleDfa& dfa);
  void check_left_recursion() const;

  RuleId root_ = 0;
  std::vector<StateId> rule_start_;
  std::vector<std::string> rule_names_;
  std::vector<std::array<std::uint8_t, 256>> classes_;  // per rule: byte -> class
  std::vector<std::uint32_t> class_map_;                // per state: its rule's classes
  std::vector<std::uint32_t> row_;                      // per state: offset into next_
  std::vector<StateId> next_;                           // per state and class
  std::vector<RuleId> state_rule_;
  std::vector<std::string> rule_signature_;  // per rule
  std::vector<std::uint8_t> accepting_;
  std::vector<std::uint8_t> reads_bytes_;
  std::vector<std::uint32_t> call_begin_;  // per state, and one past the last
  std::vector<RuleCall> calls_;
};

}  // namespace baton::grammar
