// Request and its result: one unit of work a client hands an engine; and the errors that
// end a request without a fault of the device (an engine stopping, a full queue, a
// request that cannot fit the context, a client that cancelled).
// Thread-safety: values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace baton {

struct Request {
  std::uint64_t id = 0;
  std::uint32_t bursts = 1;  // decode steps (tokens), prefill chunks or embed calls
};

struct RequestResult {
  std::uint64_t id = 0;
  std::vector<double> burst_ms;  // latency of each burst, turn wait included
};

// The engine is stopping (or stopped) and did not finish the request. Retryable:
// the same request may be sent again to a running engine.
class EngineStopped : public std::runtime_error {
 public:
  explicit EngineStopped(const std::string& engine)
      : std::runtime_error("[engine " + engine + "] stopped before the request finished; retry") {}
};

// The client cancelled the request (its stop token); the engine dropped it and its KV.
class RequestCancelled : public std::runtime_error {
 public:
  explicit RequestCancelled(const std::string& engine)
      : std::runtime_error("[engine " + engine + "] request cancelled by the client") {}
};

// The engine already holds `limit` requests that wait to run. Retryable: the queue
// drains as requests finish (HTTP 503 with Retry-After).
class QueueFull : public std::runtime_error {
 public:
  QueueFull(const std::string& engine, int limit)
      : std::runtime_error("[engine " + engine + "] " + std::to_string(limit) +
                           " requests are waiting already (the queue limit); retry later") {}
  int retry_after_s() const { return 1; }
};

// Whether `token` is an id of a vocabulary of `vocab_size` tokens.
constexpr bool in_vocabulary(std::int64_t token, std::size_t vocab_size) {
  return token >= 0 && static_cast<std::uint64_t>(token) < vocab_size;
}

// A token id outside the model's vocabulary, in the prompt or as a logit_bias key: the one
// check of a request's token ids (LlmBatch::validate, EmbeddingEngine::check). The engine names its
// model (naming()); the server names the request's field (message_for()).
class TokenOutsideVocabulary : public std::invalid_argument {
 public:
  enum class Field { prompt, logit_bias };
  TokenOutsideVocabulary(Field field, std::size_t index, std::int64_t token, std::size_t vocab_size,
                         std::string model = {})
      : std::invalid_argument(message(field, index, token, vocab_size, model, "prompt")),
        field_(field),
        index_(index),
        token_(token),
        vocab_size_(vocab_size),
        model_(std::move(model)) {}
  Field field() const { return field_; }
  // The same error, naming the model (as the server serves it).
  TokenOutsideVocabulary naming(std::string model) const {
    return TokenOutsideVocabulary(field_, index_, token_, vocab_size_, std::move(model));
  }
  // The message with the API's name of the prompt ("prompt", "input", "messages").
  std::string message_for(const std::string& prompt_param) const {
    return message(field_, index_, token_, vocab_size_, model_, prompt_param);
  }

 private:
  static std::string message(Field field, std::size_t index, std::int64_t token,
                             std::size_t vocab_size, const std::string& model,
                             const std::string& prompt_param) {
    const std::string of = model.empty() ? "the vocabulary" : "the vocabulary of '" + model + "'";
    const std::string range = ": its ids are 0 to " + std::to_string(vocab_size - 1);
    if (field == Field::logit_bias) {
      return "'logit_bias' key \"" + std::to_string(token) + "\" is a token id outside " + of +
             range;
    }
    return "token id " + std::to_string(token) + " (" + prompt_param + "[" + std::to_string(index) +
           "]) is outside " + of + range;
  }

  Field field_;
  std::size_t index_;
  std::int64_t token_;
  std::size_t vocab_size_;
  std::string model_;
};

// The prompt, or the prompt and the completion the client asked for, is longer than the
// engine's context; the message is OpenAI's, word for word, with the input's name.
class ContextLengthExceeded : public std::invalid_argument {
 public:
  ContextLengthExceeded(int context, int prompt_tokens, int max_tokens)
      : std::invalid_argument(message(context, prompt_tokens, max_tokens, "prompt")),
        context_(context),
        prompt_tokens_(prompt_tokens),
        max_tokens_(max_tokens) {}
  int context() const { return context_; }
  int prompt_tokens() const { return prompt_tokens_; }
  int max_tokens() const { return max_tokens_; }
  // The message with the API's name of the input: "messages" (chat), "prompt", "input".
  std::string message_for(const std::string& input) const {
    return message(context_, prompt_tokens_, max_tokens_, input);
  }

 private:
  static std::string message(int context, int prompt_tokens, int max_tokens,
                             const std::string& input) {
    return "This model's maximum context length is " + std::to_string(context) +
           " tokens. However, you requested " + std::to_string(prompt_tokens + max_tokens) +
           " tokens (" + std::to_string(prompt_tokens) + " in the " + input + ", " +
           std::to_string(max_tokens) + " in the completion). Please reduce the length of the " +
           input + " or completion.";
  }

  int context_;
  int prompt_tokens_;
  int max_tokens_;
};

}  // namespace baton
