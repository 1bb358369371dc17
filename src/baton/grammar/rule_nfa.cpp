#include "baton/grammar/rule_nfa.h"

#include <string>
#include <unordered_map>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar_limits.h"

namespace baton::grammar {
namespace {

class NfaBuilder {
 public:
  explicit NfaBuilder(std::size_t& budget) : budget_(budget) {}

  RuleNfa build(const Expr& body) {
    nfa_.start = add_state();
    nfa_.end = add(body, nfa_.start);
    return std::move(nfa_);
  }

 private:
  std::uint32_t add_state() {
    if (budget_ == 0)
      throw GrammarError("grammar too large: more than " + std::to_string(kMaxNfaStatesShown) +
                         " automaton states");
    --budget_;
    nfa_.states.emplace_back();
    return static_cast<std::uint32_t>(nfa_.states.size() - 1);
  }

  std::uint32_t set_index(const ByteSet& set) {
    const auto [it, inserted] = set_ids_.try_emplace(set, nfa_.sets.size());
    if (inserted) nfa_.sets.push_back(set);
    return static_cast<std::uint32_t>(it->second);
  }

  // Adds the states of `e` entered at `from`; returns the state where it has matched.
  std::uint32_t add(const Expr& e, std::uint32_t from) {
    switch (e.kind) {
      case Expr::Kind::bytes: {
        const std::uint32_t to = add_state();
        nfa_.states[from].byte_moves.emplace_back(set_index(e.set), to);
        return to;
      }
      case Expr::Kind::rule: {
        const std::uint32_t to = add_state();
        nfa_.states[from].calls.emplace_back(e.rule, to);
        return to;
      }
      case Expr::Kind::sequence:
        for (const Expr& item : e.items) from = add(item, from);
        return from;
      case Expr::Kind::choice: {
        const std::uint32_t to = add_state();
        for (const Expr& item : e.items) {
          const std::uint32_t item_start = add_state();
          nfa_.states[from].empty_moves.push_back(item_start);
          nfa_.states[add(item, item_start)].empty_moves.push_back(to);
        }
        return to;
      }
      case Expr::Kind::repeat:
        return add_repeat(e, from);
    }
    return from;
  }

  std::uint32_t add_repeat(const Expr& e, std::uint32_t from) {
    const Expr& body = e.items.at(0);
    for (std::uint32_t i = 0; i < e.min; ++i) from = add(body, from);
    if (e.max == kUnbounded) {  // from -> body -> from, and out
      const std::uint32_t loop = add_state();
      nfa_.states[from].empty_moves.push_back(loop);
      const std::uint32_t body_start = add_state();
      nfa_.states[loop].empty_moves.push_back(body_start);
      nfa_.states[add(body, body_start)].empty_moves.push_back(loop);
      return loop;
    }
    // Nested optionals, (x(x(x)?)?)?: each copy may stop the repetition.
    const std::uint32_t to = add_state();
    for (std::uint32_t i = e.min; i < e.max; ++i) {
      nfa_.states[from].empty_moves.push_back(to);
      from = add(body, from);
    }
    nfa_.states[from].empty_moves.push_back(to);
    return to;
  }

  static constexpr std::size_t kMaxNfaStatesShown = kMaxNfaStates;
  std::size_t& budget_;
  RuleNfa nfa_;
  std::unordered_map<ByteSet, std::size_t> set_ids_;
};

}  // namespace

RuleNfa build_rule_nfa(const Expr& body, std::size_t& budget) {
  return NfaBuilder(budget).build(body);
}

}  // namespace baton::grammar
