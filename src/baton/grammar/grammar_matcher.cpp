#include "baton/grammar/grammar_matcher.h"

#include <algorithm>
#include <stdexcept>

#include "baton/grammar/mask_walk.h"

namespace baton::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)) {
  if (!grammar_) throw std::invalid_argument("GrammarMatcher needs a grammar");
  const StackId start = arena_.push(grammar_->root_start(), kBottom);
  can_end_ = StackStepper(*grammar_, arena_).close(start, heads_);
}

bool GrammarMatcher::read(std::string_view bytes) {
  if (ended_) return false;
  Saved saved{.arena_size = arena_.size(), .heads = heads_, .can_end = can_end_, .ended = ended_};
  StackStepper stepper(*grammar_, arena_);
  bool bottom = can_end_;
  for (const char c : bytes) {
    bottom = stepper.step(heads_, static_cast<unsigned char>(c), scratch_);
    heads_.swap(scratch_);
    if (heads_.empty() && !bottom) {
      arena_.truncate(saved.arena_size);
      heads_ = std::move(saved.heads);
      return false;
    }
  }
  can_end_ = bottom;
  history_.push_back(std::move(saved));
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) { return read(bytes); }

bool GrammarMatcher::accept_token(TokenIndex token, const TokenVocabulary& vocabulary) {
  if (token >= vocabulary.size()) return false;
  if (vocabulary.is_end_of_sequence(token)) {
    if (!can_end_ || ended_) return false;
    history_.push_back(
        Saved{.arena_size = arena_.size(), .heads = heads_, .can_end = can_end_, .ended = ended_});
    ended_ = true;
    return true;
  }
  const std::string_view bytes = vocabulary.token_bytes(token);
  return !bytes.empty() && read(bytes);
}

void GrammarMatcher::rollback(std::size_t steps) {
  if (steps > history_.size())
    throw std::invalid_argument("rollback of " + std::to_string(steps) + " steps, only " +
                                std::to_string(history_.size()) + " taken");
  if (steps == 0) return;
  Saved& saved = history_[history_.size() - steps];
  arena_.truncate(saved.arena_size);
  heads_ = std::move(saved.heads);
  can_end_ = saved.can_end;
  ended_ = saved.ended;
  history_.resize(history_.size() - steps);
}

void GrammarMatcher::fill_mask(MaskCache& cache, std::span<std::uint32_t> mask) {
  const TokenVocabulary& vocabulary = cache.vocabulary();
  if (mask.size() != vocabulary.mask_words())
    throw std::invalid_argument("token mask of " + std::to_string(mask.size()) +
                                " words, the vocabulary needs " +
                                std::to_string(vocabulary.mask_words()));
  if (cache.grammar_ptr() != grammar_)
    throw std::invalid_argument("the mask cache belongs to another grammar");
  std::fill(mask.begin(), mask.end(), 0u);
  if (ended_) return;
  StackStepper stepper(*grammar_, arena_);
  MaskWalk walk(*grammar_, vocabulary, arena_);
  std::vector<StackId> beneath;
  for (const StackId head : heads_) {
    const StackArena::Node top = arena_.node(head);  // a copy: close() grows the arena
    const std::shared_ptr<const StateMask> state_mask = cache.state_mask(top.state);
    state_mask->add_to(mask);
    if (state_mask->rule_ends.empty()) continue;
    // Tokens that run past the end of the top rule go on with the stacks beneath it.
    const std::size_t mark = arena_.size();
    beneath.clear();
    stepper.close(top.parent, beneath);
    for (const std::uint32_t node : state_mask->rule_ends) walk.walk(node, beneath, mask, nullptr);
    arena_.truncate(mark);
  }
  if (can_end_)
    for (const TokenIndex t : vocabulary.end_of_sequence()) set_bit(mask, t);
}

}  // namespace baton::grammar
