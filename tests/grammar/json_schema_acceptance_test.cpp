// Outputs walked out of JSON Schema grammars (random tokens from the masks of a small real
// vocabulary, and random bytes) all validate against their schema under Python's
// jsonschema 4.26 (the reference; its format checker on), and hand-written wrong values are
// refused. Starts python3 (a process), once per test.
#include <gtest/gtest.h>

#include <random>

#include "baton/grammar/json_schema.h"
#include "grammar/grammar_test_util.h"

// A namespace of its own: the unity build compiles the grammar tests together.
namespace baton::grammar::json_schema_acceptance_test {
namespace {

using Json = nlohmann::ordered_json;

const char* const kSchemas[] = {
    R"({"type": "object", "properties": {"name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150}}, "required": ["name", "age"]})",
    R"({"enum": ["red", "gr\"een", 1, null, {"a": [1, 2.5]}, "\u00e9\n"]})",
    R"({"type": "array", "items": {"type": "number", "minimum": -2.5, "exclusiveMaximum": 3},
        "minItems": 1, "maxItems": 4})",
    R"({"type": "array", "prefixItems": [{"type": "boolean"}, {"const": "x"}], "items": false,
        "minItems": 1})",
    R"({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "boolean"},
        "c": {"type": "string", "maxLength": 3}}})",
    R"({"type": "object", "properties": {"id": {"type": "integer"}, "x": {"type": "string"}},
        "required": ["x"], "additionalProperties": {"type": "integer", "minimum": -5, "maximum": 5}})",
    R"({"type": "object", "properties": {"i": {"type": "boolean"}, "ide": {"type": "null"}},
        "required": ["must"], "additionalProperties": true})",
    R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
        "required": ["v"]}}, "$ref": "#/$defs/node"})",
    R"({"anyOf": [{"type": "string", "pattern": "^[a-z]+\\d{2}$"}, {"type": ["integer", "null"]}]})",
    R"({"oneOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "uuid"}]})",
    R"({"type": "array", "items": {"anyOf": [{"type": "string", "format": "date-time"},
        {"type": "string", "format": "time"}, {"type": "string", "format": "email"},
        {"type": "string", "format": "ipv4"}, {"type": "string", "format": "unknown-format"}]}})",
    R"({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"properties": {"b": {"type": "string"}, "a": {"minimum": 3}}, "required": ["b"]}]})",
    R"({"type": "integer", "exclusiveMinimum": -100, "maximum": 1000})",
    R"({"type": "number", "minimum": 0.5, "maximum": 2.25})",
    R"({"type": "number", "exclusiveMinimum": -3, "exclusiveMaximum": -1})",
    R"({"type": "string", "minLength": 2, "maxLength": 40})",
    R"({"type": "string", "pattern": "ab+c|\\d"})",
    R"({"type": "string", "nullable": true, "maxLength": 1})",
    R"({"type": ["string", "number", "boolean"]})",
    R"({})",
    R"({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
        "type": "array", "items": [{"$ref": "#/definitions/n"}], "additionalItems": {"type": "string"}})",
    R"({"$defs": {"Pet": {"type": "object", "properties": {"kind": {"const": "cat"}}, "required": ["kind"],
        "title": "Pet"}}, "type": "object", "properties": {"pet": {"allOf": [{"$ref": "#/$defs/Pet"}],
        "description": "the pet"}, "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
        "minItems": 2}}, "required": ["pet", "tags"], "additionalProperties": false})",
    R"({"type": "object", "properties": {"q": {"type": "string"}}, "anyOf": [{"required": ["q"]},
        {"properties": {"r": {"type": "integer"}}, "required": ["r"]}]})",
};

constexpr const char* kValidate = R"(
import json, sys
from jsonschema import FormatChecker
from jsonschema.validators import validator_for
bad = 0
for n, line in enumerate(open(sys.argv[1], encoding='utf-8')):
    schema, text = json.loads(line)
    try:
        instance = json.loads(text)
    except ValueError as e:
        print('not JSON', n, repr(text), e); bad += 1; continue
    validator = validator_for(schema)(schema, format_checker=FormatChecker())
    for error in validator.iter_errors(instance):
        print('invalid', n, repr(text), error.message); bad += 1; break
print('bad', bad)
)";

TEST(JsonSchemaAcceptance, WalkedOutputsValidateUnderPythonJsonschema) {
  const auto tokens = testing::test_vocabulary();
  const auto bytes = testing::byte_vocabulary();
  std::mt19937 rng(2024);
  std::vector<nlohmann::json> lines;
  for (const char* text : kSchemas) {
    const Json schema = Json::parse(text);
    const auto grammar = compile_json_schema(schema);
    MaskCache token_cache(grammar, tokens);
    MaskCache byte_cache(grammar, bytes);
    int finished = 0;
    for (int walk = 0; walk < 60; ++walk) {
      const auto out = walk % 2 == 0
                           ? testing::random_walk(GrammarMatcher(grammar), token_cache, rng, 120)
                           : testing::random_walk(GrammarMatcher(grammar), byte_cache, rng, 300);
      if (!out) continue;
      ++finished;
      lines.push_back(nlohmann::json::array({nlohmann::json::parse(text), *out}));
    }
    EXPECT_GE(finished, 15) << text;
  }
  const std::string report = testing::run_python(kValidate, lines);
  EXPECT_NE(report.find("bad 0\n"), std::string::npos) << report.substr(0, 4000);
  EXPECT_GT(lines.size(), 500u);
}

bool accepts(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  GrammarMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

TEST(JsonSchemaAcceptance, WrongValuesAreRefused) {
  const struct {
    const char* schema;
    std::vector<const char*> good;
    std::vector<const char*> bad;
  } cases[] = {
      {kSchemas[0],
       {R"({"name": "x", "age": 150})", R"( {"name":"","age":0} )"},
       {R"({"age": 1, "name": "x"})", R"({"name": "x"})", R"({"name": "x", "age": 151})",
        R"({"name": "x", "age": -1})", R"({"name": "x", "age": 1, "z": 1})",
        R"({"name": 1, "age": 1})"}},
      {kSchemas[1],
       {R"("red")", "1", "null", R"({"a": [1, 2.5]})", R"({"a":[1,2.5]})", R"("gr\"een")"},
       {R"("blue")", "2", R"({"a":[1,2]})", "true"}},
      {kSchemas[2],
       {"[-2]", "[0, 2.999, 2]", "[1,1,1,1]", "[-1.5]"},
       {"[]", "[3]", "[-3]", "[1,1,1,1,1]"}},
      {kSchemas[3], {"[true]", R"([false, "x"])"}, {"[]", R"([true, "y"])", R"([true, "x", 1])"}},
      {kSchemas[4],
       {"{}", R"({"b": true})", R"({"a": null, "c": "abc"})"},
       {R"({"c": "abcd"})", R"({"b": true, "a": null})", R"({"d": 1})", R"({,})"}},
      {kSchemas[5],
       {R"({"x": "", "zz": 5})", R"({"id": 1, "x": "y", "a": -5, "b": 0})"},
       {R"({"x": "", "zz": 6})", R"({"x": "", "id": 1})", R"({"x": "", "x": 1})"}},
      {kSchemas[6],
       {R"({"must": 1})", R"({"i": true, "must": [], "id": 0})"},
       {R"({"i": true, "must": 1, "ide": 1})", R"({"i": true})"}},
      {kSchemas[12], {"-99", "1000", "0"}, {"-100", "1001", "1.5", "-0"}},
      {kSchemas[13], {"1", "2", "1.75", "1.0"}, {"3", "2.5", "0"}},
      {kSchemas[14], {"-2", "-2.5"}, {"-3", "-1", "-1.5", "-3.0"}},
      {kSchemas[15], {R"("ab")", R"("\u00e9\n")"}, {R"("a")", R"("\ud83d\ude00")"}},
      {kSchemas[16], {R"("xxabbbcx")", R"("abc")", R"("x1")"}, {R"("ac")", R"("ab")"}},
      {kSchemas[9],
       {R"("2024-02-28")", R"("123e4567-e89b-12d3-a456-426614174000")"},
       {R"("2024-02-30")", R"("2024-13-01")", R"("123e4567")"}},
  };
  for (const auto& c : cases) {
    const auto grammar = compile_json_schema(Json::parse(c.schema));
    for (const char* good : c.good) EXPECT_TRUE(accepts(grammar, good)) << c.schema << "\n" << good;
    for (const char* bad : c.bad) EXPECT_FALSE(accepts(grammar, bad)) << c.schema << "\n" << bad;
  }
}

TEST(JsonSchemaAcceptance, JsonObjectIsAnyObjectOnly) {
  const auto grammar = compile_json_object();
  EXPECT_TRUE(accepts(grammar, R"({"a": [1, {"b": null}], "c": "d"})"));
  EXPECT_TRUE(accepts(grammar, "\n{}\n"));
  EXPECT_FALSE(accepts(grammar, "[]"));
  EXPECT_FALSE(accepts(grammar, R"("text")"));
}

}  // namespace
}  // namespace baton::grammar::json_schema_acceptance_test
