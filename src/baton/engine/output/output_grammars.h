// OutputGrammars: the grammars one chat model's requests are held to, built from what they
// ask (output_request.h) in the format the model's template writes tool calls in:
//   - tool_choice required, or a named function: the calls from the first token, in the
//     format's canonical syntax (tool_call_format.h), each call's arguments following its
//     tool's parameters schema (one call unless parallel);
//   - tool_choice auto: the same calls as a lazy grammar that starts at the format's
//     trigger; the text before it is free;
//   - response_format json_object / json_schema: that JSON value alone; with tools under
//     auto, that value or the calls.
// Built once per distinct request shape and kept (agents send the same tools and schema with
// every request). The schema's mistakes are found at once (for_request throws); the
// automata then compile on the model's compile thread while the engine prefills the prompt
// (the first mask waits for them), with the model's vocabulary built by the first compile;
// those of strings and numbers are compiled once per model (rule_dfa_cache.h).
// Thread-safety: for_request() may be called from any thread (one mutex, not held while
// building); the destructor waits for the compile under way.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/engine/llm/generation.h"
#include "baton/engine/output/output_request.h"
#include "baton/engine/worker.h"
#include "baton/grammar/mask_cache.h"
#include "baton/grammar/rule_dfa_cache.h"
#include "baton/grammar/token_vocabulary.h"
#include "baton/model/chat/tool_call_format.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"

namespace baton {

// The tokenizer's tokens as the grammar reads them: each token's bytes as it decodes in
// running text; special tokens have none (never allowed) unless their text is part of one
// of `markers` (a family's tool-call markers such as [TOOL_CALLS]); `end_tokens` end the
// output.
std::shared_ptr<const grammar::TokenVocabulary> output_vocabulary(
    const BpeTokenizer& tokenizer, const std::vector<TokenId>& end_tokens,
    const std::vector<std::string>& markers);

// A schema of the request that does not compile: `field` says whose, in OpenAI's terms
// ("tools[2].function.parameters", "response_format.json_schema.schema"); what() names the
// keyword and the path in the schema (grammar::SchemaError's message), or the size bound.
class OutputSchemaError : public std::invalid_argument {
 public:
  OutputSchemaError(std::string field, const std::string& message)
      : std::invalid_argument(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

class OutputGrammars {
 public:
  static constexpr std::size_t kKept = 64;  // grammars kept, the least recently used dropped

  // `tokenizer` must outlive this object.
  OutputGrammars(const BpeTokenizer& tokenizer, std::vector<TokenId> end_tokens,
                 ToolCallFormat format);

  // The grammar the output is held to, or null for free text. Throws OutputSchemaError for
  // a schema it cannot compile, std::invalid_argument for a named function that is not among
  // the tools. A grammar past the automata's size bounds (or a $ref cycle that recurses on the
  // left) is found by the compile: its masks then throw OutputSchemaError.
  std::shared_ptr<const OutputGrammar> for_request(const ToolUse& tools,
                                                   const ResponseFormat& format);
  ToolCallFormat tool_call_format() const { return format_; }
  std::size_t kept() const;
  // A compiled grammar's mask cache over the model's vocabulary (built on first use).
  std::shared_ptr<grammar::MaskCache> masks_of(
      std::shared_ptr<const grammar::CompiledGrammar> compiled);
  // The automata of leaf rules (strings, numbers) this model's grammars share.
  grammar::RuleDfaCache& rule_automata() { return rule_automata_; }

 private:
  std::shared_ptr<const OutputGrammar> build(const ToolUse& tools, const ResponseFormat& format);
  const std::shared_ptr<const grammar::TokenVocabulary>& vocabulary();

  const BpeTokenizer& tokenizer_;
  const std::vector<TokenId> end_tokens_;
  const ToolCallFormat format_;
  std::once_flag vocabulary_once_;
  std::shared_ptr<const grammar::TokenVocabulary> vocabulary_;  // set once
  std::shared_ptr<grammar::SharedMasks> shared_ = std::make_shared<grammar::SharedMasks>();
  grammar::RuleDfaCache rule_automata_;

  mutable std::mutex mu_;
  // Most recently used first; the map points into the list. Guarded by mu_.
  std::list<std::pair<std::string, std::shared_ptr<const OutputGrammar>>> recent_;
  std::unordered_map<std::string, decltype(recent_)::iterator> by_key_;
  Worker compiler_{"grammar compiles"};  // last: its jobs use the members above
};

}  // namespace baton
