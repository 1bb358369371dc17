// JinjaTemplate: a Jinja template (a model's chat template) parsed once and rendered with
// variables, as transformers' apply_chat_template renders it: trim_blocks and
// lstrip_blocks on, lists and dicts shared as Python's, undefined values printing as
// nothing and failing when used, transformers' tojson, raise_exception and strftime_now.
// A render is bounded: more than kMaxSteps statements and expressions, output past
// kMaxOutputBytes or macros nested past kMaxDepth stop it with a TemplateError.
// Thread-safety: immutable after construction; render() from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "baton/model/template/jinja_ast.h"

namespace baton::jinja {

class JinjaTemplate {
 public:
  static constexpr std::size_t kMaxSteps = 2'000'000;  // a 1,000-turn chat takes ~50,000
  static constexpr std::size_t kMaxOutputBytes = kMaxValueBytes;
  static constexpr int kMaxDepth = 16;

  // TemplateError ("line N: problem") when the source is not a template baton can run.
  explicit JinjaTemplate(std::string_view source);

  // TemplateError when rendering fails (raise_exception's message, an undefined value
  // used, a type error).
  std::string render(const Dict& variables) const;

 private:
  Body body_;
};

}  // namespace baton::jinja
