// The automata of leaf rules (bodies that call no rule: JSON strings, numbers, literals,
// enums), kept by the body's spelling so that the schemas one server sees share them. A
// string of at most 32 characters is 1,600 states and most of a schema's compile; the
// property names around it are what a new schema adds.
// Thread-safety: find() and store() may be called from several threads (one mutex); an
// entry is immutable.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "baton/grammar/grammar.h"
#include "baton/grammar/rule_dfa.h"

namespace baton::grammar {

// The exact spelling of a rule body that calls no rule (equal keys: equal automata, state
// for state); "" when the body refers to a rule.
std::string leaf_key(const Expr& body);

struct CachedRule {
  RuleDfa dfa;
  std::size_t nfa_states = 0;  // what building it charged, charged again on every use
};

class RuleDfaCache {
 public:
  static constexpr std::size_t kMaxStates = 2'000'000;  // kept at most; past it, start over

  std::shared_ptr<const CachedRule> find(const std::string& key) const;
  void store(const std::string& key, std::shared_ptr<const CachedRule> rule);
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CachedRule>> rules_;  // guarded by mu_
  std::size_t states_ = 0;                                                    // guarded by mu_
};

}  // namespace baton::grammar
