// One rule's automaton made deterministic (subset construction): each state has at most
// one target per byte class and one per called rule. Byte classes are the coarsest
// partition of the 256 bytes that every byte set of the rule respects.
// Thread-safety: a plain value, built and read on one thread.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "baton/grammar/rule_nfa.h"

namespace baton::grammar {

inline constexpr std::uint32_t kNoLocalState = 0xFFFFFFFFu;

struct RuleDfa {
  struct State {
    std::vector<std::uint32_t> next;                      // per class; kNoLocalState
    std::vector<std::pair<RuleId, std::uint32_t>> calls;  // (rule, target)
    bool accepting = false;
  };
  std::array<std::uint8_t, 256> classes{};  // byte -> class
  std::uint32_t class_count = 1;
  std::vector<State> states;  // states[0] is the start
};

// `budget` is the number of states still allowed over the whole grammar; it is decreased,
// and GrammarError is thrown when it runs out.
RuleDfa determinize(const RuleNfa& nfa, std::size_t& budget);

}  // namespace baton::grammar
