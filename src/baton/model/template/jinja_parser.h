// The Jinja parser: tokens (jinja_lexer.h) to a syntax tree (jinja_ast.h). The statements
// chat templates use: if/elif/else, for (several targets, a loop filter, else), set (also
// of a namespace's attribute, and the block form), macro, break, continue, raw, and
// transformers' generation block; expressions with Jinja's precedence, filters, tests,
// calls, attributes, subscripts and slices, and list, dict and tuple literals.
// Thread-safety: pure function.
#pragma once

#include <string_view>

#include "baton/model/template/jinja_ast.h"

namespace baton::jinja {

// TemplateError with the line and what was expected.
Body parse(std::string_view source);

}  // namespace baton::jinja
