#include "baton/engine/llm/stop_checker.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace baton {

StopChecker::StopChecker(const BpeTokenizer* tokenizer, const GenerationParams& params,
                         std::vector<TokenId> end_tokens, int context_left)
    : tokenizer_(tokenizer),
      params_(params),
      end_tokens_(std::move(end_tokens)),
      context_left_(context_left) {
  if (params_.max_tokens < 1) throw std::invalid_argument("max_tokens must be at least 1");
  if (!params_.stop.empty() && tokenizer_ == nullptr) {
    throw std::invalid_argument("stop strings need the model's tokenizer");
  }
  for (const std::string& stop : params_.stop) {
    if (stop.empty()) throw std::invalid_argument("a stop string must not be empty");
  }
}

std::optional<FinishReason> StopChecker::add(TokenId token) {
  ++generated_;
  const bool end = std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end();
  if (end && !params_.ignore_eos) return FinishReason::stop;
  if (tokenizer_ != nullptr) {
    text_tokens_.push_back(token);
    // Decoding the whole completion again: a token may end a multi-byte character that
    // an earlier token began, so piecewise decoding could split it.
    const std::size_t before = text_.size();
    text_ = tokenizer_->decode(text_tokens_, params_.skip_special_tokens,
                               BpeTokenizer::Decoding::continuation);
    std::size_t first_stop = std::string::npos;  // the earliest of the stop strings
    for (const std::string& stop : params_.stop) {
      // A stop string can only have appeared in the tail that changed.
      const std::size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
      const std::size_t at = text_.find(stop, std::min(from, text_.size()));
      if (at < first_stop) {  // the first listed of those found at the earliest place
        first_stop = at;
        matched_stop_ = stop;
      }
    }
    if (first_stop != std::string::npos) {
      text_.resize(first_stop);
      return FinishReason::stop;
    }
  }
  if (generated_ >= params_.max_tokens || generated_ >= context_left_) return FinishReason::length;
  return std::nullopt;
}

std::size_t utf8_complete_prefix(std::string_view text) {
  // The last sequence starts at the last byte that is not a continuation byte (10xxxxxx).
  std::size_t start = text.size();
  for (std::size_t back = 0; back < 4 && start > 0; ++back) {
    --start;
    const auto byte = static_cast<unsigned char>(text[start]);
    if ((byte & 0xC0) != 0x80) {
      const std::size_t length = byte < 0x80           ? 1
                                 : (byte >> 5) == 0x6  ? 2
                                 : (byte >> 4) == 0xE  ? 3
                                 : (byte >> 3) == 0x1E ? 4
                                                       : 1;
      return text.size() - start < length ? start : text.size();
    }
  }
  return text.size();  // no lead byte among the last four: invalid, nothing to wait for
}

std::string StopChecker::take_stable_text(bool finished) {
  std::size_t stable = text_.size();
  if (!finished) {
    // The decoder gives a character's bytes as its tokens come: hold back a partial one.
    stable = utf8_complete_prefix(text_);
    static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
    while (stable >= kReplacement.size() &&
           std::string_view(text_).substr(stable - kReplacement.size(), kReplacement.size()) ==
               kReplacement) {
      stable -= kReplacement.size();
    }
    std::size_t hold = 0;  // the longest tail that is a proper prefix of a stop string
    for (const std::string& stop : params_.stop) {
      for (std::size_t len = std::min(stop.size() - 1, stable); len > hold; --len) {
        if (text_.compare(stable - len, len, stop, 0, len) == 0) {
          hold = len;
          break;
        }
      }
    }
    stable -= hold;
  }
  if (stable <= taken_) return {};
  std::string out = text_.substr(taken_, stable - taken_);
  taken_ = stable;
  return out;
}

}  // namespace baton
