// The walk behind every token mask: the vocabulary's trie below one node, stepped byte by
// byte through the grammar's stacks, setting the bit of each token whose bytes keep some
// stack alive; a subtree the grammar refuses is skipped whole. The arena is left as found.
// Thread-safety: one walk at a time per arena.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "baton/grammar/grammar_stacks.h"
#include "baton/grammar/token_vocabulary.h"

namespace baton::grammar {

class MaskWalk {
 public:
  MaskWalk(const CompiledGrammar& grammar, const TokenVocabulary& vocabulary, StackArena& arena);

  // Sets in `mask` the tokens below trie node `from` (not `from`'s own) that `heads` can
  // read. Where a stack reaches the bottom, the token ending there is allowed and, when
  // `bottoms` is given, the node is added to it (the walk of one rule: the caller goes on
  // below the node with the stacks under the rule).
  void walk(std::uint32_t from, std::span<const StackId> heads, std::span<std::uint32_t> mask,
            std::vector<std::uint32_t>* bottoms);

 private:
  void visit(std::uint32_t node, std::size_t depth);
  void allow(const TokenVocabulary::Node& node);

  const TokenVocabulary& vocabulary_;
  StackArena& arena_;
  StackStepper stepper_;
  std::vector<std::vector<StackId>> levels_;  // the heads after each depth's byte
  std::span<std::uint32_t> mask_;
  std::vector<std::uint32_t>* bottoms_ = nullptr;
};

// The same walk for `state` alone on an empty stack, when its rule calls no other
// (CompiledGrammar::in_leaf_rule): one automaton state per trie node instead of stacks, so
// the first mask inside a JSON string (a walk of the whole trie) costs several times less.
// `rule_ends` gets the nodes where the rule may end.
void walk_leaf_rule(const CompiledGrammar& grammar, const TokenVocabulary& vocabulary,
                    StateId state, std::span<std::uint32_t> mask,
                    std::vector<std::uint32_t>& rule_ends);

// Sets bit `token` of a mask.
inline void set_bit(std::span<std::uint32_t> mask, std::uint32_t token) {
  mask[token / 32] |= 1u << (token % 32);
}

}  // namespace baton::grammar
