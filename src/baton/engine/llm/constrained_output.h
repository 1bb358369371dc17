// ConstrainedOutput: one request's output held to its grammar (OutputGrammar), step by
// step: the mask of the tokens the grammar can read next is computed while the step's
// forward pass runs (prepare_mask), the logits are masked before sampling (mask), and the
// token sampled moves the grammar on (accept). A lazy grammar (tool_choice auto) starts
// where the text first writes one of its triggers: the text from the trigger on is read by
// the grammar at once; should the grammar refuse it, the output stays free (the parser then
// reads it as content). The grammar may still be compiling when the request is admitted: the
// first mask waits for it (while the prompt's last step runs), and a compile that failed
// fails the request.
// Thread-safety: one request, on the engine's thread; the MaskCache it shares is
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/engine/llm/generation.h"
#include "baton/grammar/grammar_matcher.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

class ConstrainedOutput {
 public:
  explicit ConstrainedOutput(std::shared_ptr<const OutputGrammar> grammar);

  // The grammar decides the next token (the step must return logits, not a greedy pick).
  bool active() const { return from_start_ || matcher_.has_value(); }
  // The grammar can read nothing more: the answer is over.
  bool finished() const { return matcher_ && matcher_->finished(); }
  // The mask for the next token, if active and not ready yet; waits for the compile. Throws
  // what the compile threw.
  void prepare_mask();
  // `logits` with every token the grammar refuses set to -infinity (tokens past the
  // tokenizer's vocabulary too), in `out`. Throws std::runtime_error when the grammar
  // allows no token at all.
  void mask(std::span<const float> logits, std::vector<float>& out);
  // The token sampled, and the request's text with it. Throws std::logic_error when an
  // active grammar refuses it (a masked sample cannot be refused).
  void accept(TokenId token, const std::string& text);

 private:
  void start_on_trigger(const std::string& text);
  grammar::MaskCache& masks() const { return *grammar_->masks.get(); }
  grammar::GrammarMatcher& matcher();  // from the start: made at first use

  std::shared_ptr<const OutputGrammar> grammar_;
  const bool from_start_;
  std::optional<grammar::GrammarMatcher> matcher_;
  std::vector<std::uint32_t> mask_;
  bool mask_ready_ = false;
  bool lazy_ended_ = false;  // a lazy grammar was refused: the output stays free
  std::size_t scanned_ = 0;  // the text before this holds no trigger
};

}  // namespace baton
