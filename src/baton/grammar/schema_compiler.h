// The JSON Schema compiler's state (json_schema.h is its interface): the grammar being
// written, the root schema that $ref pointers resolve in, the rules made so far (one per
// $ref target, one per distinct subschema) and the bounds' counters. Its parts live in
// json_schema_compiler.cpp (dispatch, $ref, anyOf/allOf, enum), schema_objects.cpp
// (objects, arrays) and schema_scalars.cpp (strings, numbers).
// Thread-safety: one compilation, one thread.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "baton/grammar/json_grammar.h"
#include "baton/grammar/json_schema.h"

namespace baton::grammar {

using SchemaJson = nlohmann::ordered_json;

class SchemaCompiler {
 public:
  SchemaCompiler(Grammar& grammar, const SchemaJson& root, const JsonLayout& layout);
  Expr compile_root();

 private:
  // The value grammar of `schema` (at JSON pointer `path`), inline.
  Expr compile(const SchemaJson& schema, const std::string& path, std::size_t depth);
  // The same, as a rule shared by every identical subschema.
  Expr value_rule(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr reference(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr any_of(const SchemaJson& schema, std::string_view keyword, const std::string& path,
              std::size_t depth);
  Expr all_of(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr enumerated(const SchemaJson& schema, const std::string& path);
  Expr typed(const SchemaJson& schema, std::string_view type, const std::string& path,
             std::size_t depth);
  Expr object(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr object_members(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr array(const SchemaJson& schema, const std::string& path, std::size_t depth);
  Expr string(const SchemaJson& schema, const std::string& path);
  Expr number(const SchemaJson& schema, bool integer, const std::string& path);
  const SchemaJson& resolve(const std::string& ref, const std::string& path) const;
  void check_keywords(const SchemaJson& schema, const std::string& path) const;

  Grammar& grammar_;
  const SchemaJson& root_;
  JsonGrammar json_;
  std::string prefix_;                                  // of this compilation's rule names
  std::unordered_map<std::string, RuleId> ref_rules_;   // $ref target -> its rule
  std::unordered_map<std::string, RuleId> same_rules_;  // subschema (text or address) -> rule
  std::size_t nodes_ = 0;
};

// JSON pointer helpers: `path` + "/" + escaped `key`.
std::string pointer_child(const std::string& path, std::string_view key);

// Keys that only annotate (ignored), and the JSON Schema keywords this compiler refuses.
bool is_annotation(std::string_view key);
bool is_unsupported_keyword(std::string_view key);

}  // namespace baton::grammar
