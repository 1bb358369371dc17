#include "baton/engine/llm/constrained_output.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "baton/grammar/mask_cache.h"

namespace baton {

ConstrainedOutput::ConstrainedOutput(std::shared_ptr<const OutputGrammar> grammar)
    : grammar_(std::move(grammar)), from_start_(grammar_ && grammar_->triggers.empty()) {
  if (!grammar_ || !grammar_->masks.valid()) {
    throw std::invalid_argument("an output grammar needs masks");
  }
}

grammar::GrammarMatcher& ConstrainedOutput::matcher() {
  if (!matcher_) matcher_.emplace(masks().grammar_ptr());
  return *matcher_;
}

void ConstrainedOutput::prepare_mask() {
  if (!active() || mask_ready_) return;
  grammar::GrammarMatcher& m = matcher();
  mask_.assign(masks().vocabulary().mask_words(), 0);
  m.fill_mask(masks(), mask_);
  mask_ready_ = true;
}

void ConstrainedOutput::mask(std::span<const float> logits, std::vector<float>& out) {
  prepare_mask();
  constexpr float kRefused = -std::numeric_limits<float>::infinity();
  out.assign(logits.size(), kRefused);
  const std::size_t tokens = std::min(logits.size(), masks().vocabulary().size());
  bool any = false;
  for (std::size_t w = 0; w * 32 < tokens; ++w) {
    for (std::uint32_t bits = mask_[w]; bits != 0; bits &= bits - 1) {
      const std::size_t t = w * 32 + static_cast<std::size_t>(__builtin_ctz(bits));
      if (t >= tokens) break;
      out[t] = logits[t];
      any = true;
    }
  }
  if (!any) throw std::runtime_error("the output's grammar allows no token here");
}

void ConstrainedOutput::accept(TokenId token, const std::string& text) {
  mask_ready_ = false;
  if (active()) {
    if (!matcher().accept_token(static_cast<grammar::TokenIndex>(token), masks().vocabulary())) {
      throw std::logic_error("the output's grammar refused token " + std::to_string(token) +
                             " that its mask allowed");
    }
    return;
  }
  if (!lazy_ended_) start_on_trigger(text);
}

void ConstrainedOutput::start_on_trigger(const std::string& text) {
  std::size_t longest = 0;
  for (const std::string& t : grammar_->triggers) longest = std::max(longest, t.size());
  // A trigger may have begun in text scanned before, up to its length less one.
  const std::size_t from = scanned_ >= longest ? scanned_ - longest + 1 : 0;
  std::size_t at = std::string::npos;
  for (const std::string& t : grammar_->triggers) at = std::min(at, text.find(t, from));
  scanned_ = text.size();
  if (at == std::string::npos) return;
  matcher_.emplace(masks().grammar_ptr());
  if (!matcher_->accept_bytes(std::string_view(text).substr(at))) {
    matcher_.reset();
    lazy_ended_ = true;
  }
}

}  // namespace baton
