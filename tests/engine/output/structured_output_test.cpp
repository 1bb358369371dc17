// Structured outputs through a whole LLM engine on the CPU, with the default chat model
// (models/chat-small, trained on one book: it writes words, not JSON): answers sampled at
// temperature 1 under a json_schema grammar are judged by Python's jsonschema, an
// independent validator, and must all be valid and end with the model's end token; calls
// under tool_choice required parse back (tool_call_parser.h) to the offered tools with
// arguments valid against their schemas. The masks are computed on three threads.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "../../grammar/grammar_test_util.h"
#include "baton/engine/llm/llm_engine.h"
#include "baton/engine/output/output_grammars.h"
#include "baton/gpu/cpu/cpu_device.h"
#include "baton/host/make_runner.h"
#include "baton/model/chat/tool_call_parser.h"
#include "baton/turn/make_turn.h"
#include "test_data.h"

namespace baton::structured_output_test {
namespace {

using nlohmann::ordered_json;

const std::filesystem::path kChatModel = baton::testing::kTestData / "../../models/chat-small";

// Validates each line's {"schema", "text"}; prints "ok" or the first failure.
constexpr const char* kValidate = R"(
import json, sys, jsonschema
for n, line in enumerate(open(sys.argv[1])):
    case = json.loads(line)
    try:
        value = json.loads(case["text"])
    except ValueError as e:
        print("line", n, "not JSON:", repr(case["text"]), e); sys.exit(0)
    errors = list(jsonschema.Draft202012Validator(case["schema"]).iter_errors(value))
    if errors:
        print("line", n, "invalid:", case["text"], errors[0].message); sys.exit(0)
print("ok")
)";

class StructuredOutput : public ::testing::Test {
 protected:
  StructuredOutput() {
    turn_ = make_turn(TurnOptions{}, device_.default_stream());
    // Masks on three threads, as beside a GPU's pass: requests of one grammar share its cache.
    engine_ =
        std::make_unique<LlmEngine>("llm", model_, &tokenizer_, LlmBatchOptions{.mask_threads = 3},
                                    device_.create_stream("llm"), *turn_, cpu_runner_factory());
  }

  std::future<GenerationResult> ask(const std::shared_ptr<const OutputGrammar>& grammar,
                                    std::uint64_t seed, const std::string& question,
                                    bool ignore_eos = false) {
    GenerationRequest r{.id = seed,
                        .prompt = tokenizer_.encode("<|im_start|>user\n" + question +
                                                    "<|im_end|>\n<|im_start|>assistant\n"),
                        .params = {}};
    r.params.sampling.temperature = 1.0;
    r.params.sampling.seed = seed;
    r.params.max_tokens = 400;
    r.params.grammar = grammar;
    r.params.ignore_eos = ignore_eos;
    return engine_->submit(std::move(r));
  }

  const LlamaModel model_ = LlamaModel::load(kChatModel);
  const BpeTokenizer tokenizer_ = BpeTokenizer::from_directory(kChatModel);
  const std::vector<TokenId> ends_ = end_token_ids(model_.config());
  cpu::CpuDevice device_{CommitLimits{}};
  std::unique_ptr<GpuTurn> turn_;
  std::unique_ptr<LlmEngine> engine_;
};

const std::vector<ordered_json>& schemas() {
  static const std::vector<ordered_json> all = {
      R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 24},
          "age": {"type": "integer", "minimum": 0, "maximum": 150}}, "required": ["name", "age"]})"_json,
      R"({"type": "object", "properties": {"ok": {"type": "boolean"},
          "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 3}},
          "required": ["ok", "tags"], "additionalProperties": false})"_json,
      R"({"type": "object", "properties": {"score": {"type": "number", "exclusiveMinimum": 0,
          "maximum": 1}, "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 10}]}},
          "required": ["score"]})"_json,
      R"({"$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer"},
          "y": {"type": "integer"}}, "required": ["x", "y"]}}, "type": "array",
          "items": {"$ref": "#/$defs/point"}, "minItems": 2, "maxItems": 2})"_json,
      R"({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
          "kind": {"const": "order"}}, "required": ["id", "kind"]})"_json,
      R"({"type": "string", "format": "date"})"_json,
  };
  return all;
}

TEST_F(StructuredOutput, JsonSchemaAnswersAtTemperatureOneAreAllValidAndEnd) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  std::vector<std::pair<ordered_json, std::future<GenerationResult>>> asked;
  for (const ordered_json& schema : schemas()) {
    const auto grammar = grammars.for_request(
        {}, ResponseFormat{.kind = ResponseFormat::Kind::json_schema, .schema = schema});
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      asked.emplace_back(schema, ask(grammar, seed, "Answer in JSON."));
    }
  }
  std::vector<nlohmann::json> cases;
  for (auto& [schema, future] : asked) {
    const GenerationResult result = future.get();
    EXPECT_EQ(result.finish, FinishReason::stop) << result.text;
    cases.push_back({{"schema", nlohmann::json::parse(schema.dump())}, {"text", result.text}});
  }
  EXPECT_EQ(grammar::testing::run_python(kValidate, cases), "ok\n");
}

TEST_F(StructuredOutput, AnAnswerEndsWithItsGrammarEvenPastEndTokens) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  const auto grammar = grammars.for_request(
      {}, ResponseFormat{.kind = ResponseFormat::Kind::json_schema, .schema = schemas()[1]});
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const GenerationResult result = ask(grammar, seed, "JSON.", /*ignore_eos=*/true).get();
    EXPECT_EQ(result.finish, FinishReason::stop) << result.text;
    EXPECT_TRUE(nlohmann::json::accept(result.text)) << result.text;
  }
}

TEST_F(StructuredOutput, RequiredToolCallsParseBackToTheOfferedTools) {
  const ordered_json tools = R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string", "maxLength": 20}, "unit": {"enum": ["c", "f"]}},
      "required": ["city", "unit"]}}},
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
      "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}
  ])"_json;
  for (const ToolCallFormat format :
       {ToolCallFormat::hermes, ToolCallFormat::llama3_json, ToolCallFormat::mistral_v3,
        ToolCallFormat::mistral_v11, ToolCallFormat::functionary, ToolCallFormat::granite}) {
    OutputGrammars grammars(tokenizer_, ends_, format);
    // One call: this model, trained on prose, would go on calling to max_tokens.
    const ToolUse use{
        .tools = tools_from_json(tools), .choice = ToolUse::Choice::required, .parallel = false};
    const auto grammar = grammars.for_request(use, {});
    std::vector<std::future<GenerationResult>> asked;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) asked.push_back(ask(grammar, seed, "Call."));
    std::vector<nlohmann::json> cases;
    for (auto& future : asked) {
      const GenerationResult result = future.get();
      EXPECT_EQ(result.finish, FinishReason::stop) << to_string(format) << ": " << result.text;
      const ParsedToolOutput parsed = parse_tool_calls(format, result.text);
      ASSERT_EQ(parsed.calls.size(), 1u) << to_string(format) << ": " << result.text;
      EXPECT_EQ(parsed.content, "") << to_string(format) << ": " << result.text;
      for (const ParsedToolCall& call : parsed.calls) {
        const int index = call.name == "get_weather" ? 0 : call.name == "add" ? 1 : -1;
        ASSERT_GE(index, 0) << call.name;
        cases.push_back(
            {{"schema", nlohmann::json::parse(tools[index]["function"]["parameters"].dump())},
             {"text", call.arguments}});
      }
    }
    EXPECT_EQ(grammar::testing::run_python(kValidate, cases), "ok\n") << to_string(format);
  }
}

TEST_F(StructuredOutput, ANamedFunctionWithoutParallelCallsIsOneCallOfIt) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  const ToolUse use{.tools = tools_from_json(R"([
    {"type": "function", "function": {"name": "a"}},
    {"type": "function", "function": {"name": "b", "parameters": {"type": "object",
      "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}])"_json),
                    .choice = ToolUse::Choice::named,
                    .function = "b",
                    .parallel = false};
  const auto grammar = grammars.for_request(use, {});
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const GenerationResult result = ask(grammar, seed, "Call b.").get();
    const ParsedToolOutput parsed = parse_tool_calls(ToolCallFormat::hermes, result.text);
    ASSERT_EQ(parsed.calls.size(), 1u) << result.text;
    EXPECT_EQ(parsed.calls[0].name, "b");
    EXPECT_TRUE(nlohmann::json::parse(parsed.calls[0].arguments).at("n").is_number_integer());
  }
}

TEST_F(StructuredOutput, OneGrammarPerRequestShapeIsKept) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  const ResponseFormat format{.kind = ResponseFormat::Kind::json_object};
  const auto first = grammars.for_request({}, format);
  EXPECT_EQ(grammars.for_request({}, format), first);
  EXPECT_EQ(grammars.for_request({}, {}), nullptr);  // free text
  const ToolUse none{
      .tools = tools_from_json(R"([{"type": "function", "function": {"name": "a"}}])"_json),
      .choice = ToolUse::Choice::none};
  EXPECT_EQ(grammars.for_request(none, {}), nullptr);
  for (int i = 0; i < static_cast<int>(OutputGrammars::kKept) + 5; ++i) {
    (void)grammars.for_request(
        {}, ResponseFormat{.kind = ResponseFormat::Kind::json_schema, .schema = {{"const", i}}});
  }
  EXPECT_EQ(grammars.kept(), OutputGrammars::kKept);
  EXPECT_NE(grammars.for_request({}, format), first);  // dropped, built again
}

TEST_F(StructuredOutput, SchemaErrorsNameTheirField) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  const ToolUse use{.tools = tools_from_json(R"([
    {"type": "function", "function": {"name": "a"}},
    {"type": "function", "function": {"name": "b", "parameters": {"type": "object",
      "properties": {"n": {"type": "integer", "multipleOf": 3}}}}}])"_json),
                    .choice = ToolUse::Choice::required};
  try {
    (void)grammars.for_request(use, {});
    ADD_FAILURE() << "compiled";
  } catch (const OutputSchemaError& e) {
    EXPECT_EQ(e.field(), "tools[1].function.parameters");
    EXPECT_NE(std::string(e.what()).find("multipleOf"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/properties/n"), std::string::npos) << e.what();
  }
  try {
    (void)grammars.for_request({}, ResponseFormat{.kind = ResponseFormat::Kind::json_schema,
                                                  .schema = {{"not", {{"type", "string"}}}}});
    ADD_FAILURE() << "compiled";
  } catch (const OutputSchemaError& e) {
    EXPECT_EQ(e.field(), "response_format.json_schema.schema");
    EXPECT_NE(std::string(e.what()).find("'not'"), std::string::npos) << e.what();
  }
}

TEST_F(StructuredOutput, AGrammarThatFailsToCompileFailsItsRequestNamingTheField) {
  OutputGrammars grammars(tokenizer_, ends_, ToolCallFormat::hermes);
  // Recursion on the left: found by the compile, beside the prefill.
  const ordered_json schema = R"({"anyOf": [{"$ref": "#"}, {"type": "null"}]})"_json;
  const auto grammar = grammars.for_request(
      {}, ResponseFormat{.kind = ResponseFormat::Kind::json_schema, .schema = schema});
  try {
    (void)ask(grammar, 1, "JSON.").get();
    ADD_FAILURE() << "answered";
  } catch (const OutputSchemaError& e) {
    EXPECT_EQ(e.field(), "response_format.json_schema.schema");
    EXPECT_NE(std::string(e.what()).find("'$ref'"), std::string::npos) << e.what();
  }
  // The engine goes on serving.
  const auto object = grammars.for_request({}, {.kind = ResponseFormat::Kind::json_object});
  EXPECT_NO_THROW((void)ask(object, 2, "JSON.").get());
}

}  // namespace
}  // namespace baton::structured_output_test
