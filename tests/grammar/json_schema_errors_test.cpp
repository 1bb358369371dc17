// The JSON Schema compiler refuses what it cannot honour with a SchemaError naming the
// keyword and its JSON pointer, and refuses hostile schemas (deep, huge, exploding) within
// milliseconds instead of hanging or growing without bound.
#include <gtest/gtest.h>

#include <chrono>

#include "baton/grammar/json_schema.h"
#include "baton/grammar/schema_compiler.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::json_schema_errors_test {
namespace {

using Json = nlohmann::ordered_json;
using std::chrono::milliseconds;

// Compiles `schema`, expecting a SchemaError; returns it (keyword and path) and checks that
// the refusal is bounded work, not a runaway: the limits are far above the milliseconds
// these take (bench/grammar_mask_bench times compiles) so that a loaded machine passes.
std::pair<std::string, std::string> refusal(const Json& schema,
                                            milliseconds limit = milliseconds(2000)) {
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)compile_json_schema(schema);
    ADD_FAILURE() << "compiled: " << schema.dump().substr(0, 300);
  } catch (const SchemaError& e) {
    EXPECT_LT(std::chrono::steady_clock::now() - start, limit) << e.what();
    EXPECT_NE(std::string(e.what()).find(e.keyword()), std::string::npos);
    return {e.keyword(), e.path()};
  }
  return {};
}

TEST(JsonSchemaErrors, EveryUnsupportedKeywordIsNamedWithItsPointer) {
  for (const char* keyword :
       {"not", "if", "then", "else", "multipleOf", "minProperties", "maxProperties",
        "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
        "dependencies", "unevaluatedProperties", "unevaluatedItems", "contains", "minContains",
        "maxContains", "$dynamicRef", "$recursiveRef"}) {
    EXPECT_TRUE(is_unsupported_keyword(keyword));
    const Json nested = {{"type", "object"}, {"properties", {{"a/b", {{keyword, 2}}}}}};
    EXPECT_EQ(refusal(nested), (std::pair<std::string, std::string>{
                                   keyword, std::string("/properties/a~1b/") + keyword}));
  }
}

TEST(JsonSchemaErrors, InvalidOrUnsatisfiableKeywords) {
  const std::pair<const char*, std::pair<std::string, std::string>> cases[] = {
      {R"({"type": "array", "uniqueItems": true})", {"uniqueItems", "/uniqueItems"}},
      {R"({"type": "string", "pattern": "a(?=b)c"})", {"pattern", "/pattern"}},
      {R"({"type": "string", "pattern": "(a)\\1"})", {"pattern", "/pattern"}},
      {R"({"type": "string", "pattern": "a", "maxLength": 3})", {"maxLength", "/maxLength"}},
      {R"({"type": "string", "pattern": "a", "format": "date"})", {"format", "/format"}},
      {R"({"type": "string", "minLength": 3, "maxLength": 2})", {"minLength", "/minLength"}},
      {R"({"type": "strng"})", {"type", "/type"}},
      {R"({"type": 3})", {"type", "/type"}},
      {R"({"items": false, "type": "array", "minItems": 1})", {"minItems", "/minItems"}},
      {R"({"$ref": "https://example.com/s.json"})", {"$ref", "/$ref"}},
      {R"({"$ref": "#/$defs/missing"})", {"$ref", "/$ref"}},
      {R"({"properties": {"a": false}, "required": ["a"]})", {"false", "/properties/a"}},
      {R"({"enum": []})", {"enum", "/enum"}},
      {R"({"type": "string", "enum": [1, 2]})", {"enum", "/enum"}},
      {R"({"enum": ["a"], "maxLength": 3})", {"maxLength", "/maxLength"}},
      {R"({"type": "integer", "minimum": 1.5, "maximum": 1.9})", {"minimum", ""}},
      {R"({"type": "object", "required": ["x"], "additionalProperties": false})",
       {"required", "/required"}},
      {R"({"allOf": [{"type": "string"}, {"type": "integer"}]})", {"type", "/allOf/1/type"}},
      {R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})", {"pattern", "/allOf/1/pattern"}},
      {R"({"allOf": [{"properties": {"a": {}}, "additionalProperties": false},
                    {"properties": {"b": {}}}]})",
       {"additionalProperties", "/allOf/1/additionalProperties"}},
      {R"({"anyOf": {"type": "string"}})", {"anyOf", "/anyOf"}},
      {R"({"$ref": "#"})", {"$ref", ""}},
      {R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}}, "$ref": "#/$defs/a"})",
       {"$ref", ""}},
      {R"({"type": "number", "minimum": "1"})", {"minimum", "/minimum"}},
      {R"({"type": "array", "minItems": -1})", {"minItems", "/minItems"}},
      {R"(false)", {"false", ""}},
      {R"([1])", {"", ""}},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_EQ(refusal(Json::parse(text)), expected) << text;
}

Json nested_arrays(int depth) {
  Json schema = {{"type", "integer"}};
  for (int i = 0; i < depth; ++i) schema = Json{{"type", "array"}, {"items", schema}};
  return schema;
}

TEST(JsonSchemaErrors, HostileSchemasAreRefusedQuickly) {
  EXPECT_EQ(refusal(nested_arrays(2000)).first, "items");
  Json huge_enum = {{"enum", Json::array()}};
  for (int i = 0; i < 100'000; ++i) huge_enum["enum"].push_back(i);
  EXPECT_EQ(refusal(huge_enum).first, "enum");
  EXPECT_EQ(refusal(Json{{"type", "string"}, {"pattern", "a{100000}"}}).first, "pattern");
  EXPECT_EQ(refusal(Json{{"type", "string"}, {"pattern", "((a{999}){999}){999}"}}).first,
            "pattern");
  EXPECT_EQ(refusal(Json{{"type", "array"}, {"maxItems", 1'000'000'000'000}}).first, "maxItems");
  EXPECT_EQ(refusal(Json{{"type", "string"}, {"maxLength", 1'000'000}}).first, "maxLength");
  // 150 objects of 150 properties: past the bound of 5,000 subschemas and properties.
  Json inner = {{"type", "object"}, {"properties", Json::object()}};
  for (int i = 0; i < 150; ++i)
    inner["properties"]["p" + std::to_string(i)] = {{"type", "integer"}};
  Json many = {{"type", "object"}, {"properties", Json::object()}};
  for (int i = 0; i < 150; ++i) many["properties"]["o" + std::to_string(i)] = inner;
  EXPECT_EQ(refusal(many).first, "properties");
  // Patterns each as large as allowed, side by side: the automaton bound stops them.
  Json wide = {{"type", "object"}, {"properties", Json::object()}};
  for (int i = 0; i < 200; ++i)
    wide["properties"]["p" + std::to_string(i)] = {
        {"type", "string"}, {"pattern", "^([a-z]{999}|x" + std::to_string(i) + ")$"}};
  const auto [keyword, path] = refusal(wide);
  EXPECT_EQ(keyword, "");
  EXPECT_EQ(path, "");
}

TEST(JsonSchemaErrors, ExplodingReferencesCompileOnce) {
  // Each level names the next twice: 2^30 expansions if inlined, 30 rules as compiled.
  Json schema = {{"$defs", Json::object()}, {"$ref", "#/$defs/d0"}};
  for (int i = 0; i < 30; ++i) {
    const std::string next = "#/$defs/d" + std::to_string(i + 1);
    schema["$defs"]["d" + std::to_string(i)] = {
        {"type", "array"},
        {"prefixItems", Json::array({{{"$ref", next}}, {{"$ref", next}}})},
        {"items", false}};
  }
  schema["$defs"]["d30"] = {{"type", "integer"}};
  const auto start = std::chrono::steady_clock::now();
  const auto grammar = compile_json_schema(schema);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_LT(grammar->rule_count(), 200u);
}

}  // namespace
}  // namespace baton::grammar::json_schema_errors_test
