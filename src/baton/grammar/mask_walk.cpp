#include "baton/grammar/mask_walk.h"

namespace baton::grammar {

MaskWalk::MaskWalk(const CompiledGrammar& grammar, const TokenVocabulary& vocabulary,
                   StackArena& arena)
    : vocabulary_(vocabulary),
      arena_(arena),
      stepper_(grammar, arena),
      levels_(vocabulary.longest_token() + 2) {}

void MaskWalk::walk(std::uint32_t from, std::span<const StackId> heads,
                    std::span<std::uint32_t> mask, std::vector<std::uint32_t>* bottoms) {
  if (heads.empty()) return;
  mask_ = mask;
  bottoms_ = bottoms;
  levels_[0].assign(heads.begin(), heads.end());
  visit(from, 0);
}

void MaskWalk::allow(const TokenVocabulary::Node& node) {
  for (const TokenIndex t : vocabulary_.tokens(node)) set_bit(mask_, t);
}

void MaskWalk::visit(std::uint32_t node, std::size_t depth) {
  const std::span<const TokenVocabulary::Node> nodes = vocabulary_.nodes();
  const std::uint32_t end = nodes[node].subtree_end;
  for (std::uint32_t child = node + 1; child < end; child = nodes[child].subtree_end) {
    const std::size_t mark = arena_.size();
    std::vector<StackId>& after = levels_[depth + 1];
    const bool bottom = stepper_.step(levels_[depth], nodes[child].byte, after);
    if (bottom || !after.empty()) allow(nodes[child]);
    if (bottom && bottoms_ != nullptr) bottoms_->push_back(child);
    if (!after.empty() && nodes[child].subtree_end > child + 1) visit(child, depth + 1);
    arena_.truncate(mark);
  }
}

namespace {

struct LeafWalk {
  const CompiledGrammar& grammar;
  std::span<const TokenVocabulary::Node> nodes;
  const TokenVocabulary& vocabulary;
  std::span<std::uint32_t> mask;
  std::vector<std::uint32_t>& rule_ends;

  void visit(std::uint32_t node, StateId state) {
    const CompiledGrammar::Row row = grammar.row(state);
    const std::uint32_t end = nodes[node].subtree_end;
    for (std::uint32_t child = node + 1; child < end; child = nodes[child].subtree_end) {
      const StateId next = row.next[row.classes[nodes[child].byte]];
      if (next == kNoState) continue;
      const bool ends = grammar.accepting(next);
      const bool reads = grammar.reads_bytes(next);
      if (ends || reads)
        for (const TokenIndex t : vocabulary.tokens(nodes[child])) set_bit(mask, t);
      if (ends) rule_ends.push_back(child);
      if (reads && nodes[child].subtree_end > child + 1) visit(child, next);
    }
  }
};

}  // namespace

void walk_leaf_rule(const CompiledGrammar& grammar, const TokenVocabulary& vocabulary,
                    StateId state, std::span<std::uint32_t> mask,
                    std::vector<std::uint32_t>& rule_ends) {
  LeafWalk{.grammar = grammar,
           .nodes = vocabulary.nodes(),
           .vocabulary = vocabulary,
           .mask = mask,
           .rule_ends = rule_ends}
      .visit(0, state);
}

}  // namespace baton::grammar
