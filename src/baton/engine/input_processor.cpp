#include "baton/engine/input_processor.h"

#include "baton/model/chat_template.h"

namespace baton {

InputProcessor::InputProcessor(const ModelSource& source, const BpeTokenizer& tokenizer,
                               GenerationDefaults defaults, std::optional<ChatFamily> family)
    : tokenizer_(tokenizer), defaults_(defaults) {
  try {
    template_ = load_chat_template(source, family);
  } catch (const NoChatTemplate&) {
    // A model without a template still serves raw completions; a chat request says why.
    // Any other template error (one that does not parse) refuses the model at load.
    template_error_ = std::current_exception();
  }
}

std::vector<TokenId> InputProcessor::chat_prompt(std::span<const ChatMessage> messages,
                                                 ChatEnd end) const {
  if (!template_) std::rethrow_exception(template_error_);
  return tokenizer_.encode(render(*template_, messages, end));
}

std::vector<TokenId> InputProcessor::text_prompt(const std::string& text) const {
  return tokenizer_.encode_with_special(text);
}

SamplingParams InputProcessor::sampling(const SamplingRequest& r) const {
  SamplingParams p;
  const bool sample = defaults_.do_sample.value_or(false);
  p.temperature = r.temperature.value_or(sample ? defaults_.temperature.value_or(1.0) : 0.0);
  p.top_p = r.top_p.value_or(sample ? defaults_.top_p.value_or(1.0) : 1.0);
  p.top_k = r.top_k.value_or(sample ? static_cast<int>(defaults_.top_k.value_or(0)) : 0);
  p.min_p = r.min_p.value_or(0.0);
  p.repetition_penalty = r.repetition_penalty.value_or(defaults_.repetition_penalty.value_or(1.0));
  p.presence_penalty = r.presence_penalty.value_or(0.0);  // generation_config has none
  p.frequency_penalty = r.frequency_penalty.value_or(0.0);
  p.seed = r.seed;
  p.logit_bias = r.logit_bias;
  return p;
}

std::string InputProcessor::template_name() const {
  if (!template_) return "raw";
  return template_->jinja ? "jinja" : std::string(to_string(template_->family));
}

}  // namespace baton
