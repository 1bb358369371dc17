#include "baton/grammar/rule_dfa.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar_limits.h"

namespace baton::grammar {
namespace {

struct VectorHash {
  std::size_t operator()(const std::vector<std::uint32_t>& v) const {
    std::size_t h = v.size();
    for (const std::uint32_t x : v) h = h * 1000003u ^ x;
    return h;
  }
};

// Splits the bytes into classes that no set of `sets` tells apart.
std::uint32_t partition_bytes(const std::vector<ByteSet>& sets,
                              std::array<std::uint8_t, 256>& classes) {
  std::array<std::uint32_t, 256> cls{};
  std::uint32_t count = 1;
  for (const ByteSet& set : sets) {
    std::array<std::int32_t, 512> renumber;  // (old class, in set) -> new class
    renumber.fill(-1);
    std::uint32_t next = 0;
    for (unsigned b = 0; b < 256; ++b) {
      std::int32_t& slot = renumber[cls[b] * 2 + (set.test(b) ? 1 : 0)];
      if (slot < 0) slot = static_cast<std::int32_t>(next++);
      cls[b] = static_cast<std::uint32_t>(slot);
    }
    count = next;
  }
  for (unsigned b = 0; b < 256; ++b) classes[b] = static_cast<std::uint8_t>(cls[b]);
  return count;
}

class SubsetBuilder {
 public:
  SubsetBuilder(const RuleNfa& nfa, std::size_t& budget)
      : nfa_(nfa), budget_(budget), stamp_(nfa.states.size(), 0) {}

  RuleDfa build() {
    dfa_.class_count = partition_bytes(nfa_.sets, dfa_.classes);
    for (const ByteSet& set : nfa_.sets) {
      std::vector<std::uint32_t> in;
      for (unsigned b = 0; b < 256; ++b)
        if (set.test(b) && std::find(in.begin(), in.end(), dfa_.classes[b]) == in.end())
          in.push_back(dfa_.classes[b]);
      set_classes_.push_back(std::move(in));
    }
    buckets_.resize(dfa_.class_count);
    state_of({nfa_.start});
    for (std::size_t i = 0; i < subsets_.size(); ++i) expand(static_cast<std::uint32_t>(i));
    return std::move(dfa_);
  }

 private:
  // The DFA state of the closure of `seeds` (added if new). The closure is built in a buffer
  // kept between calls; only a new state's set is copied, once, into the map's key.
  std::uint32_t state_of(const std::vector<std::uint32_t>& seeds) {
    closure(seeds);
    const auto found = ids_.find(set_);
    if (found != ids_.end()) return found->second;
    if (budget_ == 0)
      throw GrammarError("grammar too large: more than " + std::to_string(kMaxDfaStates) +
                         " automaton states after determinizing");
    --budget_;
    const auto id = static_cast<std::uint32_t>(subsets_.size());
    subsets_.push_back(&ids_.emplace(set_, id).first->first);  // keys stay put on rehash
    dfa_.states.emplace_back();
    return id;
  }

  // set_ = the states reachable from `seeds` by empty moves, sorted.
  void closure(const std::vector<std::uint32_t>& seeds) {
    ++epoch_;
    set_.clear();
    todo_.assign(seeds.begin(), seeds.end());
    while (!todo_.empty()) {
      const std::uint32_t s = todo_.back();
      todo_.pop_back();
      if (stamp_[s] == epoch_) continue;
      stamp_[s] = epoch_;
      set_.push_back(s);
      for (const std::uint32_t t : nfa_.states[s].empty_moves) todo_.push_back(t);
    }
    std::sort(set_.begin(), set_.end());
  }

  void expand(std::uint32_t id) {
    std::vector<std::uint32_t> touched;
    std::map<RuleId, std::vector<std::uint32_t>> calls;
    bool accepting = false;
    for (const std::uint32_t s : *subsets_[id]) {
      accepting = accepting || s == nfa_.end;
      for (const auto& [set, target] : nfa_.states[s].byte_moves)
        for (const std::uint32_t c : set_classes_[set]) {
          if (buckets_[c].empty()) touched.push_back(c);
          buckets_[c].push_back(target);
        }
      for (const auto& [rule, target] : nfa_.states[s].calls) calls[rule].push_back(target);
    }
    std::vector<std::uint32_t> next(dfa_.class_count, kNoLocalState);
    for (const std::uint32_t c : touched) {
      next[c] = state_of(buckets_[c]);
      buckets_[c].clear();  // keeps its capacity for the next state
    }
    std::vector<std::pair<RuleId, std::uint32_t>> call_moves;
    for (auto& [rule, targets] : calls) call_moves.emplace_back(rule, state_of(targets));
    RuleDfa::State& state = dfa_.states[id];  // after state_of, which may grow the vector
    state.next = std::move(next);
    state.calls = std::move(call_moves);
    state.accepting = accepting;
  }

  const RuleNfa& nfa_;
  std::size_t& budget_;
  RuleDfa dfa_;
  std::vector<std::vector<std::uint32_t>> set_classes_;
  std::vector<std::vector<std::uint32_t>> buckets_;
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, VectorHash> ids_;
  std::vector<const std::vector<std::uint32_t>*> subsets_;  // by id: the keys of ids_
  std::vector<std::uint32_t> set_, todo_;                   // closure()'s buffers
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
};

}  // namespace

RuleDfa determinize(const RuleNfa& nfa, std::size_t& budget) {
  return SubsetBuilder(nfa, budget).build();
}

}  // namespace baton::grammar
