// InputProcessor: what turns a user's request into what an LLM engine runs, the same for
// `baton generate` and the server: the model's chat template (or the text as it is),
// tokenization, and the sampling parameters, resolved here and only here: the request's,
// then the server's configured defaults for the model, then the model's
// generation_config.json, then greedy, as transformers does.
// Thread-safety: immutable after construction; use from any thread.
#pragma once

#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/model/chat/chat_template.h"
#include "baton/model/config/model_config.h"
#include "baton/model/output/sampler.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton {

// What a request may say about sampling; what it leaves unset comes from the model.
struct SamplingRequest {
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<double> presence_penalty, frequency_penalty;  // OpenAI's; default 0
  std::optional<int> top_k;
  std::optional<std::uint64_t> seed;
  LogitBias logit_bias;  // OpenAI's; only a request sets it (no model default)
};

class InputProcessor {
 public:
  // Loads the chat template (`family` overrides the model's) only when the model has one
  // or a family is given; without either, chat_prompt() throws and text_prompt() works.
  // A template that is there but cannot be loaded (it does not parse) throws
  // ModelFileError: the model is refused at load, not at its first chat.
  InputProcessor(const ModelSource& source, const BpeTokenizer& tokenizer,
                 GenerationDefaults defaults, std::optional<ChatFamily> family = std::nullopt);
  InputProcessor(const std::filesystem::path& path, const BpeTokenizer& tokenizer,
                 GenerationDefaults defaults, std::optional<ChatFamily> family = std::nullopt)
      : InputProcessor(ModelSource::open(path), tokenizer, defaults, family) {}

  // The conversation in the chat template, ended as `end` says, tokenized. Throws
  // std::invalid_argument for a conversation the template refuses, ChatTemplateError when
  // the model's template fails on it, NoChatTemplate when the model has no template.
  // `tools` are offered to the template (none when empty).
  std::vector<TokenId> chat_prompt(std::span<const ChatMessage> messages,
                                   ChatEnd end = ChatEnd::open_reply,
                                   const ChatTools& tools = {}) const;
  // How the model writes tool calls (its template's format; hermes without a template).
  ToolCallFormat tool_call_format() const {
    return template_ ? template_->tool_call_format : ToolCallFormat::hermes;
  }
  // A raw completion's text, tokenized with the special tokens the tokenizer's post-processor
  // puts around a text (Llama's BOS), as transformers and vLLM encode a prompt.
  std::vector<TokenId> text_prompt(const std::string& text) const;
  bool has_chat_template() const { return template_.has_value(); }
  // `configured`: the server's defaults for this model (its TOML or flags).
  SamplingParams sampling(const SamplingRequest& request,
                          const SamplingRequest& configured = {}) const;
  // "jinja" for the model's own template, a built-in family's name when one was asked
  // for, "raw" when the model has none.
  std::string template_name() const;
  const BpeTokenizer& tokenizer() const { return tokenizer_; }

 private:
  const BpeTokenizer& tokenizer_;
  GenerationDefaults defaults_;
  std::optional<ChatTemplate> template_;
  std::exception_ptr template_error_;  // why there is no template
};

}  // namespace baton
