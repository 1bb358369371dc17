#include "baton/engine/llm/input_processor.h"

#include "baton/model/chat/chat_template.h"

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

std::vector<TokenId> InputProcessor::chat_prompt(std::span<const ChatMessage> messages, ChatEnd end,
                                                 const ChatTools& tools) const {
  if (!template_) std::rethrow_exception(template_error_);
  return tokenizer_.encode(render(*template_, messages, end, tools));
}

std::vector<TokenId> InputProcessor::text_prompt(const std::string& text) const {
  return tokenizer_.encode_with_special(text);
}

namespace {

// The request's value, else the configured default's.
template <typename T>
std::optional<T> either(const std::optional<T>& request, const std::optional<T>& configured) {
  return request ? request : configured;
}

}  // namespace

SamplingParams InputProcessor::sampling(const SamplingRequest& request,
                                        const SamplingRequest& configured) const {
  const SamplingRequest& r = request;
  const SamplingRequest& c = configured;
  SamplingParams p;
  const bool sample = defaults_.do_sample.value_or(false);
  p.temperature = either(r.temperature, c.temperature)
                      .value_or(sample ? defaults_.temperature.value_or(1.0) : 0.0);
  p.top_p = either(r.top_p, c.top_p).value_or(sample ? defaults_.top_p.value_or(1.0) : 1.0);
  p.top_k =
      either(r.top_k, c.top_k).value_or(sample ? static_cast<int>(defaults_.top_k.value_or(0)) : 0);
  p.min_p = either(r.min_p, c.min_p).value_or(0.0);
  p.repetition_penalty = either(r.repetition_penalty, c.repetition_penalty)
                             .value_or(defaults_.repetition_penalty.value_or(1.0));
  // generation_config has no presence or frequency penalty.
  p.presence_penalty = either(r.presence_penalty, c.presence_penalty).value_or(0.0);
  p.frequency_penalty = either(r.frequency_penalty, c.frequency_penalty).value_or(0.0);
  p.seed = either(r.seed, c.seed);
  p.logit_bias = r.logit_bias;
  return p;
}

std::string InputProcessor::template_name() const {
  if (!template_) return "raw";
  return template_->jinja ? "jinja" : std::string(to_string(template_->family));
}

}  // namespace baton
