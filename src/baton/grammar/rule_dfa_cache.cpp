#include "baton/grammar/rule_dfa_cache.h"

#include <cstdint>

namespace baton::grammar {
namespace {

void append_u32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Appends `e`'s spelling; false at a rule reference.
bool spell(const Expr& e, std::string& out) {
  out += static_cast<char>(e.kind);
  switch (e.kind) {
    case Expr::Kind::rule:
      return false;
    case Expr::Kind::bytes:
      for (unsigned b = 0; b < 256; b += 32) {
        std::uint32_t word = 0;
        for (unsigned i = 0; i < 32; ++i) word |= (e.set.test(b + i) ? 1u : 0u) << i;
        append_u32(out, word);
      }
      return true;
    case Expr::Kind::repeat:
      append_u32(out, e.min);
      append_u32(out, e.max);
      break;
    case Expr::Kind::sequence:
    case Expr::Kind::choice:
      break;
  }
  append_u32(out, static_cast<std::uint32_t>(e.items.size()));
  for (const Expr& item : e.items)
    if (!spell(item, out)) return false;
  return true;
}

}  // namespace

std::string leaf_key(const Expr& body) {
  std::string key;
  return spell(body, key) ? key : std::string();
}

std::shared_ptr<const CachedRule> RuleDfaCache::find(const std::string& key) const {
  const std::lock_guard lock(mu_);
  const auto found = rules_.find(key);
  return found == rules_.end() ? nullptr : found->second;
}

void RuleDfaCache::store(const std::string& key, std::shared_ptr<const CachedRule> rule) {
  const std::size_t states = rule->dfa.states.size();
  const std::lock_guard lock(mu_);
  if (states_ + states > kMaxStates) {
    rules_.clear();
    states_ = 0;
  }
  if (rules_.emplace(key, std::move(rule)).second) states_ += states;
}

std::size_t RuleDfaCache::size() const {
  const std::lock_guard lock(mu_);
  return rules_.size();
}

}  // namespace baton::grammar
