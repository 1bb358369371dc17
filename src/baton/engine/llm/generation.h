// GenerationRequest and GenerationResult: what a client asks an LLM engine for and what
// it gets back, with the timings a server reports (queue wait, prefill, decode) and the
// prefix-cache hit; and TokenDelta, each token as it is made, for a client that streams.
// A request carries a stop token its client may trigger to cancel it.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/output/sampler.h"
#include "baton/model/tokenizer/token_id.h"

namespace baton {

namespace grammar {
class MaskCache;
}

// Output held to a grammar (structured outputs, tool calls): each step masks the tokens the
// grammar cannot read. `masks` holds the compiled grammar and the model's vocabulary once
// compiled: a grammar compiles while the prompt is prefilled, and get() waits for it (and
// throws what the compile threw).
struct OutputGrammar {
  std::shared_future<std::shared_ptr<grammar::MaskCache>> masks;
  // Empty: the grammar holds from the first token. Else it is lazy (tool_choice auto): the
  // text is free until it writes one of these, and from the trigger on the grammar holds.
  std::vector<std::string> triggers{};
};

// An OutputGrammar compiled already.
inline std::shared_ptr<const OutputGrammar> ready_grammar(std::shared_ptr<grammar::MaskCache> masks,
                                                          std::vector<std::string> triggers = {}) {
  std::promise<std::shared_ptr<grammar::MaskCache>> compiled;
  compiled.set_value(std::move(masks));
  return std::make_shared<const OutputGrammar>(
      OutputGrammar{.masks = compiled.get_future().share(), .triggers = std::move(triggers)});
}

struct GenerationParams {
  SamplingParams sampling;
  int max_tokens = 256;  // generated tokens at most (the end token included)
  // Set by the client: prompt + max_tokens beyond the context is then refused
  // (ContextLengthExceeded), as OpenAI does; otherwise max_tokens is cut to the context.
  bool max_tokens_explicit = false;
  std::vector<std::string> stop;  // stop strings: the text ends before the first one
  bool ignore_eos = false;        // keep going past the model's end tokens
  // The text leaves out special tokens (vLLM's skip_special_tokens); false keeps the markers
  // some families write tool calls with ([TOOL_CALLS], <|python_tag|>).
  bool skip_special_tokens = true;
  std::shared_ptr<const OutputGrammar> grammar{};  // none: free text
};

// stop: an end token or a stop string; length: max_tokens or the model's context.
enum class FinishReason { stop, length };

constexpr std::string_view to_string(FinishReason reason) {
  return reason == FinishReason::stop ? "stop" : "length";
}

// One generated token as it is sampled, with the text that became final with it: text
// is held back while it may still change (a character not yet complete, a tail that may
// grow into a stop string), so the deltas of a request add up to its result's text.
struct TokenDelta {
  TokenId token = 0;
  float logprob = 0.0f;
  std::string text;                    // may be empty
  std::optional<FinishReason> finish;  // set on the last token
  std::vector<TopLogprob> top;         // sampling.top_logprobs of them, most likely first
};

struct GenerationRequest {
  std::uint64_t id = 0;
  std::vector<TokenId> prompt;
  GenerationParams params;
  // Called on the engine thread with every token as it is made; must be quick (hand it
  // to another thread). If it throws, the request fails with that error. Either way the
  // future holds the whole result, or the error that ended the request early.
  std::function<void(const TokenDelta&)> on_token;
  // Stop-requested: the request leaves the engine within one step, waiting or running,
  // its KV blocks go back, and the future holds RequestCancelled (unless it was done).
  std::stop_token cancel;
  // Called on the engine thread once the future is ready (after the last on_token), for a
  // client that waits without a thread of its own; not called when submit() refuses the
  // request (its future is ready when submit returns). Must be quick.
  std::function<void()> on_done;
};

struct GenerationResult {
  std::uint64_t id = 0;
  std::vector<TokenId> tokens;  // every generated token, an end token included
  std::vector<float> logprobs;  // of each generated token
  std::string text;             // the completion's text, up to a stop string, no end token
  // The most likely tokens at each generated token (sampling.top_logprobs > 0), else empty.
  std::vector<std::vector<TopLogprob>> top_logprobs;
  FinishReason finish = FinishReason::length;
  // The stop string that ended it (finish is stop), as the request listed it; else none.
  std::optional<std::string> stop_sequence;
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;    // reused from the prefix cache, not prefilled
  double queued_ms = 0.0;          // submit -> admitted: the engine picking it up, then admission
  double admission_wait_ms = 0.0;  // picked up -> admitted: waiting for KV blocks or a batch slot
  double prefill_ms = 0.0;         // admitted -> first token
  double decode_ms = 0.0;          // first token -> last token
};

}  // namespace baton
