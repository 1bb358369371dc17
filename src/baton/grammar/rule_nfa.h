// One rule's body as a nondeterministic automaton (Thompson's construction): states joined
// by empty moves, byte-set moves and rule calls. rule_dfa.h makes it deterministic.
// Thread-safety: a plain value, built and read on one thread.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

struct NfaState {
  std::vector<std::uint32_t> empty_moves;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> byte_moves;  // (set index, target)
  std::vector<std::pair<RuleId, std::uint32_t>> calls;              // (rule, target)
};

struct RuleNfa {
  std::vector<NfaState> states;
  std::vector<ByteSet> sets;  // the distinct byte sets the moves read
  std::uint32_t start = 0;
  std::uint32_t end = 0;  // the one accepting state
};

// Builds the automaton of `body`. `budget` is the number of states still allowed over the
// whole grammar; it is decreased, and GrammarError is thrown when it runs out.
RuleNfa build_rule_nfa(const Expr& body, std::size_t& budget);

}  // namespace baton::grammar
