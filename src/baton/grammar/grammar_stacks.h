// The matcher's stacks of automaton states, kept persistent in an arena: a stack is the id
// of its top node, and stacks share their tails, so a step copies nothing and a walk that
// looks ahead undoes itself by truncating the arena. A set of stacks ("heads") follows
// every way the grammar can read the output so far; each head's top state reads bytes.
// Thread-safety: one owner (a matcher, or one mask computation) at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "baton/grammar/compiled_grammar.h"

namespace baton::grammar {

using StackId = std::uint32_t;
// Below every stack: reaching it means the grammar (or, in a walk of one rule, that rule)
// has matched.
inline constexpr StackId kBottom = 0xFFFFFFFFu;

class StackArena {
 public:
  struct Node {
    StateId state = kNoState;
    StackId parent = kBottom;
    std::uint32_t depth = 1;
  };
  // A new stack with `state` on `parent`, or kBottom when it would be deeper than
  // kMaxStackDepth (the caller drops it).
  StackId push(StateId state, StackId parent);
  const Node& node(StackId id) const { return nodes_[id]; }
  std::size_t size() const { return nodes_.size(); }
  void truncate(std::size_t size) { nodes_.resize(size); }
  // Whether two stacks hold the same states (shared tails end the comparison early).
  bool same(StackId a, StackId b) const;

 private:
  std::vector<Node> nodes_;
};

// Steps stacks through the moves that read nothing (calls, returns).
class StackStepper {
 public:
  StackStepper(const CompiledGrammar& grammar, StackArena& arena)
      : grammar_(grammar), arena_(arena) {}

  // Adds to `heads` every stack reachable from `stack` without reading whose top reads
  // bytes (none twice). Returns whether the bottom is reachable (the grammar may end).
  bool close(StackId stack, std::vector<StackId>& heads);
  // Reads `byte` on every stack of `heads`, then closes; the result goes to `out`.
  // Returns whether the bottom is reachable after the byte.
  bool step(std::span<const StackId> heads, unsigned char byte, std::vector<StackId>& out);

 private:
  bool seen(StackId stack) const;
  void add_head(StackId stack, std::vector<StackId>& heads) const;

  const CompiledGrammar& grammar_;
  StackArena& arena_;
  std::vector<StackId> visited_;
  std::vector<StackId> todo_;
};

}  // namespace baton::grammar
