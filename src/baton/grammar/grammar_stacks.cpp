#include "baton/grammar/grammar_stacks.h"

#include <algorithm>

#include "baton/grammar/grammar_limits.h"

namespace baton::grammar {

StackId StackArena::push(StateId state, StackId parent) {
  const std::uint32_t depth = parent == kBottom ? 1 : nodes_[parent].depth + 1;
  if (depth > kMaxStackDepth) return kBottom;
  nodes_.push_back(Node{.state = state, .parent = parent, .depth = depth});
  return static_cast<StackId>(nodes_.size() - 1);
}

bool StackArena::same(StackId a, StackId b) const {
  while (a != b) {
    if (a == kBottom || b == kBottom) return false;
    const Node& x = nodes_[a];
    const Node& y = nodes_[b];
    if (x.state != y.state || x.depth != y.depth) return false;
    a = x.parent;
    b = y.parent;
  }
  return true;
}

bool StackStepper::seen(StackId stack) const {
  return std::any_of(visited_.begin(), visited_.end(),
                     [&](StackId v) { return arena_.same(v, stack); });
}

void StackStepper::add_head(StackId stack, std::vector<StackId>& heads) const {
  if (heads.size() >= kMaxHeads) return;
  if (std::none_of(heads.begin(), heads.end(), [&](StackId h) { return arena_.same(h, stack); }))
    heads.push_back(stack);
}

bool StackStepper::close(StackId stack, std::vector<StackId>& heads) {
  if (stack == kBottom) return true;
  const StateId top = arena_.node(stack).state;
  // The common case, a state that only reads bytes: nothing to explore.
  if (grammar_.calls(top).empty() && !grammar_.accepting(top)) {
    add_head(stack, heads);
    return false;
  }
  bool bottom = false;
  visited_.clear();
  todo_.assign(1, stack);
  while (!todo_.empty()) {
    const StackId s = todo_.back();
    todo_.pop_back();
    if (s == kBottom) {
      bottom = true;
      continue;
    }
    if (seen(s)) continue;
    visited_.push_back(s);
    const StackArena::Node node = arena_.node(s);
    if (grammar_.reads_bytes(node.state)) add_head(s, heads);
    if (grammar_.accepting(node.state)) todo_.push_back(node.parent);
    for (const RuleCall& call : grammar_.calls(node.state)) {
      // A tail call (nothing left to do after it but return) keeps no frame, so chains of
      // rules (a long object's optional members) do not grow the stack.
      const StateId back = call.return_to;
      const bool tail =
          grammar_.accepting(back) && !grammar_.reads_bytes(back) && grammar_.calls(back).empty();
      const StackId caller = tail ? node.parent : arena_.push(back, node.parent);
      if (caller == kBottom && !tail) continue;
      const StackId callee = arena_.push(grammar_.rule_start(call.rule), caller);
      if (callee != kBottom) todo_.push_back(callee);
    }
  }
  return bottom;
}

bool StackStepper::step(std::span<const StackId> heads, unsigned char byte,
                        std::vector<StackId>& out) {
  out.clear();
  bool bottom = false;
  for (const StackId head : heads) {
    const StackArena::Node node = arena_.node(head);
    const StateId next = grammar_.next(node.state, byte);
    if (next == kNoState) continue;
    const StackId moved = next == node.state ? head : arena_.push(next, node.parent);
    if (moved == kBottom) continue;
    bottom = close(moved, out) || bottom;
  }
  return bottom;
}

}  // namespace baton::grammar
