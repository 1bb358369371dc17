#include <algorithm>
#include <array>

#include "baton/grammar/grammar_limits.h"
#include "baton/grammar/schema_compiler.h"
#include "baton/grammar/schema_merge.h"

namespace baton::grammar {
namespace {

constexpr std::array kAnnotations = {
    "title",   "description", "examples",        "default",          "$schema",
    "$id",     "$comment",    "deprecated",      "readOnly",         "writeOnly",
    "$anchor", "$vocabulary", "contentEncoding", "contentMediaType", "contentSchema",
    "$defs",   "definitions"};

constexpr std::array kUnsupported = {"not",
                                     "if",
                                     "then",
                                     "else",
                                     "multipleOf",
                                     "minProperties",
                                     "maxProperties",
                                     "patternProperties",
                                     "propertyNames",
                                     "dependentRequired",
                                     "dependentSchemas",
                                     "dependencies",
                                     "unevaluatedProperties",
                                     "unevaluatedItems",
                                     "contains",
                                     "minContains",
                                     "maxContains",
                                     "$dynamicRef",
                                     "$recursiveRef",
                                     "$dynamicAnchor",
                                     "$recursiveAnchor"};

// Which kind of value each keyword constrains, to guess a missing "type".
constexpr std::array kObjectKeys = {"properties", "required", "additionalProperties"};
constexpr std::array kArrayKeys = {"items", "prefixItems", "additionalItems", "minItems",
                                   "maxItems"};
constexpr std::array kStringKeys = {"minLength", "maxLength", "pattern", "format"};
constexpr std::array kNumberKeys = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};

template <std::size_t N>
bool has_any(const SchemaJson& schema, const std::array<const char*, N>& keys) {
  return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return schema.contains(k); });
}

template <std::size_t N>
bool listed(std::string_view key, const std::array<const char*, N>& keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// A keyword of one type's family (minLength, properties, ...), which enum and const do not
// combine with.
bool constrains_one_type(std::string_view key) {
  return listed(key, kObjectKeys) || listed(key, kArrayKeys) || listed(key, kStringKeys) ||
         listed(key, kNumberKeys);
}

bool value_has_type(const SchemaJson& v, std::string_view type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
  return false;
}

std::string last_key(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool is_annotation(std::string_view key) { return listed(key, kAnnotations); }

bool is_unsupported_keyword(std::string_view key) { return listed(key, kUnsupported); }

std::string pointer_child(const std::string& path, std::string_view key) {
  std::string out = path + "/";
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

SchemaCompiler::SchemaCompiler(Grammar& grammar, const SchemaJson& root, const JsonLayout& layout)
    : grammar_(grammar),
      root_(root),
      json_(grammar, layout),
      prefix_("schema" + std::to_string(grammar.rule_count()) + "_") {}

Expr SchemaCompiler::compile_root() { return compile(root_, "", 0); }

void SchemaCompiler::check_keywords(const SchemaJson& schema, const std::string& path) const {
  for (const auto& [key, value] : schema.items()) {
    if (is_unsupported_keyword(key))
      throw SchemaError(key, pointer_child(path, key), "not supported by the grammar compiler");
    if (key == "uniqueItems" && value != false)
      throw SchemaError(key, pointer_child(path, key), "only false is supported");
  }
}

Expr SchemaCompiler::compile(const SchemaJson& schema, const std::string& path, std::size_t depth) {
  if (++nodes_ > kMaxSchemaNodes)
    throw SchemaError(last_key(path), path,
                      "more than " + std::to_string(kMaxSchemaNodes) + " subschemas");
  if (depth > kMaxSchemaDepth)
    throw SchemaError(last_key(path), path,
                      "nested deeper than " + std::to_string(kMaxSchemaDepth));
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return json_.value();
    throw SchemaError("false", path, "the schema false accepts no value");
  }
  if (!schema.is_object()) throw SchemaError("", path, "a schema must be an object or a boolean");
  check_keywords(schema, path);
  if (schema.contains("$ref")) return reference(schema, path, depth);
  if (schema.contains("allOf")) return all_of(schema, path, depth);
  if (schema.contains("anyOf")) return any_of(schema, "anyOf", path, depth);
  if (schema.contains("oneOf")) return any_of(schema, "oneOf", path, depth);
  if (schema.contains("enum") || schema.contains("const")) return enumerated(schema, path);
  std::vector<std::string> types;
  if (const auto type = schema.find("type"); type != schema.end()) {
    if (type->is_string()) {
      types.push_back(type->get<std::string>());
    } else if (type->is_array() && !type->empty()) {
      for (const auto& t : *type) {
        if (!t.is_string())
          throw SchemaError("type", pointer_child(path, "type"), "must name types");
        types.push_back(t.get<std::string>());
      }
    } else {
      throw SchemaError("type", pointer_child(path, "type"),
                        "must be a type name or a list of them");
    }
  } else {
    if (has_any(schema, kObjectKeys)) types.emplace_back("object");
    if (has_any(schema, kArrayKeys)) types.emplace_back("array");
    if (has_any(schema, kStringKeys)) types.emplace_back("string");
    if (has_any(schema, kNumberKeys)) types.emplace_back("number");
    if (types.empty()) return json_.value();
  }
  std::vector<Expr> alternatives;
  for (const std::string& t : types) alternatives.push_back(typed(schema, t, path, depth));
  return choice(std::move(alternatives));
}

Expr SchemaCompiler::typed(const SchemaJson& schema, std::string_view type, const std::string& path,
                           std::size_t depth) {
  if (type == "null") return json_.null();
  if (type == "boolean") return json_.boolean();
  if (type == "object") return object(schema, path, depth);
  if (type == "array") return array(schema, path, depth);
  if (type == "string") return string(schema, path);
  if (type == "number") return number(schema, false, path);
  if (type == "integer") return number(schema, true, path);
  throw SchemaError("type", pointer_child(path, "type"),
                    "unknown type '" + std::string(type) + "'");
}

Expr SchemaCompiler::value_rule(const SchemaJson& schema, const std::string& path,
                                std::size_t depth) {
  if (schema.is_boolean() && schema.get<bool>()) return json_.value();
  if (depth > kMaxSchemaDepth)
    throw SchemaError(last_key(path), path,
                      "nested deeper than " + std::to_string(kMaxSchemaDepth));
  // Leaf schemas ({"type": "string"}, ...) are shared by their text, so that one rule and
  // its cached masks serve every property of that type; others by their place.
  const auto structured = [](const SchemaJson& v) {
    return v.is_object() ||
           (v.is_array() &&
            std::any_of(v.begin(), v.end(), [](const SchemaJson& x) { return x.is_structured(); }));
  };
  const bool leaf = schema.is_object() && std::none_of(schema.begin(), schema.end(), structured);
  const std::string key =
      leaf ? "t" + schema.dump() : "p" + std::to_string(reinterpret_cast<std::uintptr_t>(&schema));
  if (const auto found = same_rules_.find(key); found != same_rules_.end())
    return ref(found->second);
  const RuleId rule = grammar_.declare(prefix_ + "value");
  same_rules_.emplace(key, rule);
  grammar_.define(rule, compile(schema, path, depth));
  return ref(rule);
}

const SchemaJson& SchemaCompiler::resolve(const std::string& ref_text,
                                          const std::string& path) const {
  return resolve_reference(root_, ref_text, path);
}

Expr SchemaCompiler::reference(const SchemaJson& schema, const std::string& path,
                               std::size_t depth) {
  const std::string where = pointer_child(path, "$ref");
  if (!schema["$ref"].is_string()) throw SchemaError("$ref", where, "must be a string");
  for (const auto& [key, value] : schema.items())
    if (key != "$ref" && !is_annotation(key))
      return compile(merge_schemas(SchemaJson::object(), schema, path, root_), path, depth + 1);
  const std::string target = schema["$ref"].get<std::string>();
  if (const auto found = ref_rules_.find(target); found != ref_rules_.end())
    return ref(found->second);
  const SchemaJson& resolved = resolve(target, path);
  const RuleId rule = grammar_.declare(prefix_ + "ref");
  ref_rules_.emplace(target, rule);
  grammar_.define(rule, compile(resolved, target.substr(1), depth + 1));
  return ref(rule);
}

Expr SchemaCompiler::any_of(const SchemaJson& schema, std::string_view keyword,
                            const std::string& path, std::size_t depth) {
  const std::string where = pointer_child(path, keyword);
  const SchemaJson& branches = schema[std::string(keyword)];
  if (!branches.is_array() || branches.empty())
    throw SchemaError(std::string(keyword), where, "must be a non-empty array");
  SchemaJson siblings = schema;
  siblings.erase(std::string(keyword));
  const bool plain = std::all_of(siblings.items().begin(), siblings.items().end(),
                                 [](const auto& item) { return is_annotation(item.key()); });
  std::vector<Expr> alternatives;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    const std::string branch_path = pointer_child(where, std::to_string(i));
    if (plain) {
      alternatives.push_back(compile(branches[i], branch_path, depth + 1));
    } else {  // the siblings hold for every branch: merge them in
      SchemaJson merged = merge_schemas(siblings, branches[i], branch_path, root_);
      alternatives.push_back(compile(merged, branch_path, depth + 1));
    }
  }
  return choice(std::move(alternatives));
}

Expr SchemaCompiler::all_of(const SchemaJson& schema, const std::string& path, std::size_t depth) {
  const std::string where = pointer_child(path, "allOf");
  const SchemaJson& parts = schema["allOf"];
  if (!parts.is_array() || parts.empty())
    throw SchemaError("allOf", where, "must be a non-empty array");
  SchemaJson merged = schema;
  merged.erase("allOf");
  for (std::size_t i = 0; i < parts.size(); ++i)
    merged = merge_schemas(merged, parts[i], pointer_child(where, std::to_string(i)), root_);
  return compile(merged, path, depth + 1);
}

Expr SchemaCompiler::enumerated(const SchemaJson& schema, const std::string& path) {
  const bool is_enum = schema.contains("enum");
  const std::string keyword = is_enum ? "enum" : "const";
  const std::string where = pointer_child(path, keyword);
  if (is_enum && schema.contains("const")) throw SchemaError("const", where, "together with enum");
  for (const auto& [key, value] : schema.items())
    if (constrains_one_type(key))
      throw SchemaError(key, pointer_child(path, key),
                        "together with " + keyword + " is not supported");
  const SchemaJson values = is_enum ? schema["enum"] : SchemaJson::array({schema["const"]});
  if (!values.is_array() || values.empty())
    throw SchemaError(keyword, where, "must be a non-empty array");
  if (values.size() > kMaxEnumValues)
    throw SchemaError(keyword, where, "more than " + std::to_string(kMaxEnumValues) + " values");
  std::vector<std::string> types;
  if (schema.contains("type")) {
    const SchemaJson& t = schema["type"];
    for (const auto& one : t.is_array() ? t : SchemaJson::array({t}))
      if (one.is_string()) types.push_back(one.get<std::string>());
  }
  std::vector<Expr> alternatives;
  for (const auto& v : values) {
    const bool typed_ok =
        types.empty() || std::any_of(types.begin(), types.end(),
                                     [&](const std::string& t) { return value_has_type(v, t); });
    if (typed_ok) alternatives.push_back(json_.constant(v));
  }
  if (alternatives.empty()) throw SchemaError(keyword, where, "no value of the schema's type");
  return choice(std::move(alternatives));
}

Expr json_schema_value(Grammar& grammar, const nlohmann::ordered_json& schema,
                       const JsonLayout& layout) {
  return SchemaCompiler(grammar, schema, layout).compile_root();
}

std::shared_ptr<const CompiledGrammar> compile_json_schema(const nlohmann::ordered_json& schema,
                                                           const JsonLayout& layout) {
  Grammar grammar;
  const JsonGrammar json(grammar, layout);
  Expr value = json_schema_value(grammar, schema, layout);
  try {
    return CompiledGrammar::compile_expr(std::move(grammar),
                                         sequence({json.ws(), std::move(value), json.ws()}));
  } catch (const GrammarError& e) {  // left recursion comes only from $ref cycles
    const bool cycle = std::string_view(e.what()).find("left recursion") != std::string_view::npos;
    throw SchemaError(cycle ? "$ref" : "", "", e.what());
  }
}

std::shared_ptr<const CompiledGrammar> compile_json_object(const JsonLayout& layout) {
  Grammar grammar;
  JsonGrammar json(grammar, layout);
  Expr object = json.object();
  return CompiledGrammar::compile_expr(std::move(grammar),
                                       sequence({json.ws(), std::move(object), json.ws()}));
}

}  // namespace baton::grammar
