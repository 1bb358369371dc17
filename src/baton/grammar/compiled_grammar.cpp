#include "baton/grammar/compiled_grammar.h"

#include <algorithm>

#include "baton/grammar/grammar_limits.h"
#include "baton/grammar/rule_dfa.h"
#include "baton/grammar/rule_dfa_cache.h"
#include "baton/grammar/rule_nfa.h"

namespace baton::grammar {
namespace {

void collect_refs(const Expr& e, std::vector<RuleId>& out) {
  if (e.kind == Expr::Kind::rule) out.push_back(e.rule);
  for (const Expr& item : e.items) collect_refs(item, out);
}

// The rules `root` reaches, root first.
std::vector<RuleId> reachable_rules(const Grammar& grammar, RuleId root) {
  std::vector<bool> seen(grammar.rule_count(), false);
  std::vector<RuleId> order{root};
  seen.at(root) = true;
  std::size_t nodes = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Expr& body = grammar.body(order[i]);
    nodes += expr_size(body);
    if (nodes > kMaxExprNodes)
      throw GrammarError("grammar too large: more than " + std::to_string(kMaxExprNodes) +
                         " expression nodes");
    std::vector<RuleId> refs;
    collect_refs(body, refs);
    for (const RuleId r : refs) {
      if (r >= grammar.rule_count()) throw GrammarError("grammar refers to an unknown rule");
      if (!seen[r]) {
        seen[r] = true;
        order.push_back(r);
      }
    }
  }
  if (order.size() > kMaxRules)
    throw GrammarError("grammar too large: more than " + std::to_string(kMaxRules) + " rules");
  return order;
}

// Charges a cached automaton to the budgets as building it would have, with the same errors.
void charge(std::size_t& budget, std::size_t states, const char* what, std::size_t bound) {
  if (states > budget)
    throw GrammarError("grammar too large: more than " + std::to_string(bound) + what);
  budget -= states;
}

}  // namespace

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile(const Grammar& grammar, RuleId root,
                                                                RuleDfaCache* cache) {
  std::shared_ptr<CompiledGrammar> out(new CompiledGrammar());
  out->root_ = root;
  out->rule_start_.assign(grammar.rule_count(), kNoState);
  out->rule_signature_.assign(grammar.rule_count(), std::string());
  for (std::size_t r = 0; r < grammar.rule_count(); ++r)
    out->rule_names_.push_back(grammar.name(static_cast<RuleId>(r)));
  std::size_t nfa_budget = kMaxNfaStates;
  std::size_t dfa_budget = kMaxDfaStates;
  const std::vector<RuleId> rules = reachable_rules(grammar, root);
  // Every rule's start must be known before any call is written: determinize all, then lay out.
  std::vector<std::shared_ptr<const CachedRule>> dfas;
  StateId offset = 0;
  for (const RuleId r : rules) {
    std::string key = leaf_key(grammar.body(r));
    std::shared_ptr<const CachedRule> dfa = cache && !key.empty() ? cache->find(key) : nullptr;
    if (dfa) {
      charge(nfa_budget, dfa->nfa_states, " automaton states", kMaxNfaStates);
      charge(dfa_budget, dfa->dfa.states.size(), " automaton states after determinizing",
             kMaxDfaStates);
    } else {
      const std::size_t before = nfa_budget;
      const RuleNfa nfa = build_rule_nfa(grammar.body(r), nfa_budget);
      dfa = std::make_shared<const CachedRule>(
          CachedRule{.dfa = determinize(nfa, dfa_budget), .nfa_states = before - nfa_budget});
      if (cache && !key.empty()) cache->store(key, dfa);
    }
    dfas.push_back(std::move(dfa));
    out->rule_start_[r] = offset;
    offset += static_cast<StateId>(dfas.back()->dfa.states.size());
    if (!key.empty()) out->rule_signature_[r] = "L" + std::move(key);
  }
  std::size_t transitions = 0;
  for (const auto& dfa : dfas) transitions += dfa->dfa.states.size() * dfa->dfa.class_count;
  out->reserve(offset, transitions);
  for (std::size_t i = 0; i < rules.size(); ++i) out->append_rule(rules[i], dfas[i]->dfa);
  out->call_begin_.push_back(static_cast<std::uint32_t>(out->calls_.size()));
  out->check_left_recursion();
  return out;
}

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile_expr(Grammar grammar, Expr root,
                                                                     RuleDfaCache* cache) {
  const RuleId rule = grammar.add_rule("root", std::move(root));
  return compile(grammar, rule, cache);
}

void CompiledGrammar::reserve(std::size_t states, std::size_t transitions) {
  next_.reserve(transitions);
  for (auto* per_state : {&class_map_, &row_, &call_begin_}) per_state->reserve(states + 1);
  state_rule_.reserve(states);
  accepting_.reserve(states);
  reads_bytes_.reserve(states);
}

void CompiledGrammar::append_rule(RuleId rule, const RuleDfa& dfa) {
  const StateId offset = rule_start_[rule];
  const auto class_table = static_cast<std::uint32_t>(classes_.size());
  classes_.push_back(dfa.classes);
  for (const RuleDfa::State& state : dfa.states) {
    state_rule_.push_back(rule);
    class_map_.push_back(class_table);
    row_.push_back(static_cast<std::uint32_t>(next_.size()));
    bool reads = false;
    for (const std::uint32_t target : state.next) {
      reads = reads || target != kNoLocalState;
      next_.push_back(target == kNoLocalState ? kNoState : offset + target);
    }
    accepting_.push_back(state.accepting ? 1 : 0);
    reads_bytes_.push_back(reads ? 1 : 0);
    call_begin_.push_back(static_cast<std::uint32_t>(calls_.size()));
    for (const auto& [callee, target] : state.calls)
      calls_.push_back(RuleCall{.rule = callee, .return_to = offset + target});
  }
}

// A rule that can call itself before reading a byte would push forever. Nullable rules
// (that can match nothing) let a call see past them, so they are found first.
void CompiledGrammar::check_left_recursion() const {
  const std::size_t n = rule_start_.size();
  std::vector<bool> nullable(n, false);
  // The states of `rule` reached from its start without reading, through nullable calls;
  // `callees` gets every rule called on the way.
  const auto walk = [&](RuleId rule, std::vector<RuleId>* callees) {
    std::vector<StateId> todo{rule_start_[rule]};
    std::vector<StateId> seen;
    bool reaches_accept = false;
    while (!todo.empty()) {
      const StateId s = todo.back();
      todo.pop_back();
      if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      seen.push_back(s);
      reaches_accept = reaches_accept || accepting(s);
      for (const RuleCall& call : calls(s)) {
        if (callees) callees->push_back(call.rule);
        if (nullable[call.rule]) todo.push_back(call.return_to);
      }
    }
    return reaches_accept;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (RuleId r = 0; r < n; ++r)
      if (rule_start_[r] != kNoState && !nullable[r] && walk(r, nullptr)) {
        nullable[r] = true;
        changed = true;
      }
  }
  std::vector<std::vector<RuleId>> first_calls(n);
  for (RuleId r = 0; r < n; ++r)
    if (rule_start_[r] != kNoState) walk(r, &first_calls[r]);
  std::vector<std::uint8_t> color(n, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<RuleId, std::size_t>> path;
  for (RuleId r0 = 0; r0 < n; ++r0) {
    if (rule_start_[r0] == kNoState || color[r0] != 0) continue;
    path.emplace_back(r0, 0);
    color[r0] = 1;
    while (!path.empty()) {
      auto& [r, i] = path.back();
      if (i == first_calls[r].size()) {
        color[r] = 2;
        path.pop_back();
        continue;
      }
      const RuleId next_rule = first_calls[r][i++];
      if (color[next_rule] == 1)
        throw GrammarError("grammar rule '" + rule_names_[next_rule] +
                           "' can call itself before reading a byte (left recursion)");
      if (color[next_rule] == 0) {
        color[next_rule] = 1;
        path.emplace_back(next_rule, 0);
      }
    }
  }
}

}  // namespace baton::grammar
