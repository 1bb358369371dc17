// The part of a token mask that depends on one automaton state alone, cached per state for
// one grammar and one vocabulary. A stack's mask is the tokens its top state's rule can
// read by itself (the same whatever lies beneath: so it is sound to cache by the top state)
// plus, for tokens that run past the end of that rule, a short walk below the trie nodes
// where the rule ends, with the stacks beneath. Inside a JSON string this makes a mask an
// OR of a cached bitmask and a walk of the few tokens that hold the closing quote.
// Thread-safety: state_mask() may be called from several threads at once (one mutex guards
// the map; a mask is computed outside it, once: threads asking for it meanwhile wait);
// what it returns is immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/token_vocabulary.h"

namespace baton::grammar {

struct StateMask {
  // The tokens readable from the state within its rule: dense bits when many, else ids.
  std::vector<std::uint32_t> bits;
  std::vector<TokenIndex> tokens;
  // The trie nodes where the rule may end and the token go on under the rule's caller.
  std::vector<std::uint32_t> rule_ends;
  std::size_t bytes() const;
  // ORs the tokens into `mask`.
  void add_to(std::span<std::uint32_t> mask) const;
};

// The masks of states whose rule calls no other (JSON strings, numbers, literals), by the
// rule's signature (CompiledGrammar::signature): the same in every grammar, so one
// vocabulary's grammars share them and the first mask inside a JSON string is computed once
// per process, not once per schema.
// Thread-safety: find() and store() may be called from several threads (one mutex).
class SharedMasks {
 public:
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;  // past it, start over
  std::shared_ptr<const StateMask> find(const std::string& signature, std::uint32_t index) const;
  void store(const std::string& signature, std::uint32_t index,
             std::shared_ptr<const StateMask> mask);
  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const StateMask>> masks_;  // guarded by mu_
  std::size_t bytes_ = 0;                                                    // guarded by mu_
};

class MaskCache {
 public:
  // Bytes of cached masks kept at most; past it the cache starts over.
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;

  // `shared`, when given, must belong to `vocabulary` (one SharedMasks per tokenizer).
  MaskCache(std::shared_ptr<const CompiledGrammar> grammar,
            std::shared_ptr<const TokenVocabulary> vocabulary,
            std::shared_ptr<SharedMasks> shared = nullptr);

  const CompiledGrammar& grammar() const { return *grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  const std::shared_ptr<const CompiledGrammar>& grammar_ptr() const { return grammar_; }

  // The mask of `state` (a state that reads bytes), computed on first use.
  std::shared_ptr<const StateMask> state_mask(StateId state);
  std::size_t cached_states() const;

 private:
  std::shared_ptr<const StateMask> find_or_compute(StateId state) const;
  std::shared_ptr<const StateMask> compute(StateId state) const;

  const std::shared_ptr<const CompiledGrammar> grammar_;
  const std::shared_ptr<const TokenVocabulary> vocabulary_;
  const std::shared_ptr<SharedMasks> shared_;
  mutable std::mutex mu_;
  // Ready, or being computed by one thread while the others that ask wait for it.
  std::unordered_map<StateId, std::shared_future<std::shared_ptr<const StateMask>>>
      masks_;                                                            // guarded by mu_
  std::size_t bytes_ = 0;                                                // guarded by mu_
};

}  // namespace baton::grammar
