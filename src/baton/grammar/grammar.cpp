#include "baton/grammar/grammar.h"

#include <stdexcept>

namespace baton::grammar {

Expr empty() { return Expr{.kind = Expr::Kind::sequence}; }

Expr bytes(const ByteSet& set) { return Expr{.kind = Expr::Kind::bytes, .set = set}; }

Expr byte_range(unsigned char lo, unsigned char hi) {
  ByteSet set;
  for (unsigned b = lo; b <= hi; ++b) set.set(b);
  return bytes(set);
}

Expr byte_of(unsigned char b) { return byte_range(b, b); }

Expr any_of(std::string_view chars) {
  ByteSet set;
  for (const char c : chars) set.set(static_cast<unsigned char>(c));
  return bytes(set);
}

Expr literal(std::string_view text) {
  Expr e = empty();
  for (const char c : text) e.items.push_back(byte_of(static_cast<unsigned char>(c)));
  return e;
}

Expr sequence(std::vector<Expr> items) {
  if (items.size() == 1) return std::move(items.front());
  return Expr{.kind = Expr::Kind::sequence, .items = std::move(items)};
}

Expr choice(std::vector<Expr> items) {
  if (items.size() == 1) return std::move(items.front());
  return Expr{.kind = Expr::Kind::choice, .items = std::move(items)};
}

Expr repeat(Expr body, std::uint32_t min, std::uint32_t max) {
  if (min > max) throw std::invalid_argument("repetition with min > max");
  Expr e{.kind = Expr::Kind::repeat, .min = min, .max = max};
  e.items.push_back(std::move(body));
  return e;
}

Expr optional(Expr body) { return repeat(std::move(body), 0, 1); }
Expr star(Expr body) { return repeat(std::move(body), 0, kUnbounded); }
Expr plus(Expr body) { return repeat(std::move(body), 1, kUnbounded); }
Expr ref(RuleId rule) { return Expr{.kind = Expr::Kind::rule, .rule = rule}; }

std::size_t expr_size(const Expr& e) {
  std::size_t n = 1;
  for (const Expr& item : e.items) n += expr_size(item);
  return n;
}

RuleId Grammar::declare(std::string_view name) {
  std::string unique(name);
  for (int& suffix = next_suffix_[unique]; by_name_.contains(unique);)
    unique = std::string(name) + "_" + std::to_string(++suffix + 1);
  by_name_.emplace(unique, static_cast<RuleId>(names_.size()));
  names_.push_back(std::move(unique));
  bodies_.emplace_back();
  return static_cast<RuleId>(names_.size() - 1);
}

void Grammar::define(RuleId rule, Expr body) { bodies_.at(rule) = std::move(body); }

RuleId Grammar::add_rule(std::string_view name, Expr body) {
  const RuleId rule = declare(name);
  define(rule, std::move(body));
  return rule;
}

std::optional<RuleId> Grammar::find_rule(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

const Expr& Grammar::body(RuleId rule) const {
  const std::optional<Expr>& b = bodies_.at(rule);
  if (!b) throw std::invalid_argument("grammar rule '" + names_.at(rule) + "' is never defined");
  return *b;
}

}  // namespace baton::grammar
