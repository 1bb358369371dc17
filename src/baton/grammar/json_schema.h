// JSON Schema compiled to a grammar of the JSON values it accepts, for structured outputs
// and tool arguments. Supported: type (and type lists), properties, required,
// additionalProperties, items, prefixItems (and the older items-array / additionalItems),
// minItems, maxItems, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// minLength, maxLength, pattern (regex_compiler.h), format (date, time, date-time, uuid,
// email, ipv4; other formats are ignored, as validators do by default), anyOf, oneOf (as
// anyOf: branches that overlap may give a value matching two), allOf (merged when its
// schemas do not share a keyword), $ref to "#..." pointers with $defs / definitions
// (recursion allowed). Annotations (title, description, examples,
// default, $schema, $id, $comment, ...) and keys outside JSON Schema (OpenAPI's nullable
// among them: a validator ignores it too) are ignored. Every
// other JSON Schema keyword (not, if, multipleOf, patternProperties, uniqueItems: true, ...)
// is a SchemaError naming it.
// Choices of the grammar (each a subset of what the schema accepts): properties come in the
// schema's order, required or optional, with no others unless additionalProperties allows
// them (absent counts as false, as llama.cpp does); additional keys are ASCII without
// escapes and never one of the named properties; numbers follow number_ranges.h and
// json_grammar.h; layout follows JsonLayout (enum and const values too, their strings
// spelled as json.dumps writes them).
// Bounds (grammar_limits.h): nesting 128, 5,000 subschemas and properties, 1,024 enum values,
// counts up to 1,000 (string lengths up to 10,000); past them, a SchemaError in milliseconds.
// Thread-safety: pure functions.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "baton/grammar/compiled_grammar.h"
#include "baton/grammar/grammar.h"
#include "baton/grammar/json_grammar.h"
#include "baton/grammar/schema_error.h"

namespace baton::grammar {

// Adds to `grammar` the rules of a JSON value that `schema` accepts; returns the value's
// expression (to compose with other expressions). Throws SchemaError.
Expr json_schema_value(Grammar& grammar, const nlohmann::ordered_json& schema,
                       const JsonLayout& layout = {});

// A whole grammar: optional whitespace, the value, optional whitespace.
std::shared_ptr<const CompiledGrammar> compile_json_schema(const nlohmann::ordered_json& schema,
                                                           const JsonLayout& layout = {});

// Any JSON object (response_format json_object), with whitespace around it.
std::shared_ptr<const CompiledGrammar> compile_json_object(const JsonLayout& layout = {});

}  // namespace baton::grammar
