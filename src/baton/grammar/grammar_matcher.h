// GrammarMatcher: where one output stands in a compiled grammar. The engine's step is
//   fill_mask(cache, mask) -> apply the mask to the logits -> sample -> accept_token(id).
// accept_* refuse (return false, state unchanged) what the grammar cannot read; the
// end-of-sequence tokens are allowed only where the grammar can end. rollback() undoes
// accepted tokens (speculative decoding); a copy of the matcher is a full snapshot.
// Thread-safety: one request at a time (not thread-safe); the CompiledGrammar and the
// MaskCache it uses are shared and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar_stacks.h"
#include "baton/grammar/mask_cache.h"
#include "baton/grammar/token_vocabulary.h"

namespace baton::grammar {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Reads `bytes` as one step (undone by one rollback); false (and nothing read) if the
  // output would stop being a prefix of the grammar's language.
  bool accept_bytes(std::string_view bytes);
  // Reads token `token`'s bytes; an end-of-sequence token is accepted only where
  // can_end(), and ends the matcher. False (and nothing read) for a refused token.
  bool accept_token(TokenIndex token, const TokenVocabulary& vocabulary);
  // The output so far is a whole sentence of the grammar: end-of-sequence is allowed.
  bool can_end() const { return can_end_; }
  // No byte can follow (the grammar has ended, or end-of-sequence was accepted).
  bool finished() const { return ended_ || heads_.empty(); }
  // Undoes the last `steps` accepted steps (tokens or accept_bytes calls). Throws
  // std::invalid_argument past the start.
  void rollback(std::size_t steps);
  std::size_t steps() const { return history_.size(); }

  // Fills `mask` (cache.vocabulary().mask_words() words; bit i: token i) with the tokens
  // that keep the output a prefix, and the end-of-sequence tokens where it can end.
  // Throws std::invalid_argument for a mask of the wrong size or a cache of another grammar.
  void fill_mask(MaskCache& cache, std::span<std::uint32_t> mask);

 private:
  struct Saved {
    std::size_t arena_size = 0;
    std::vector<StackId> heads;
    bool can_end = false;
    bool ended = false;
  };
  bool read(std::string_view bytes);

  std::shared_ptr<const CompiledGrammar> grammar_;
  StackArena arena_;
  std::vector<StackId> heads_;
  std::vector<StackId> scratch_;
  bool can_end_ = false;
  bool ended_ = false;
  std::vector<Saved> history_;
};

}  // namespace baton::grammar
