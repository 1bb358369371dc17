// Where baton's Jinja engine rendered published templates unlike transformers (issue 46):
// integer dict keys (ByteDance Seed-OSS), filters over none (functionary v3.1) and
// filters that grew a value past the output limit before checking it. The expected texts
// are what jinja2 3.1.6 renders, set up as transformers' apply_chat_template
// (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, tools=None, documents=None).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "baton/model/template/jinja_template.h"

// A namespace of its own: the unity build compiles this file beside jinja_test.cpp.
namespace baton::jinja::transformers_test {
namespace {

const std::filesystem::path kTemplateDir =
    std::filesystem::path(BATON_TEST_DATA) / "chat_templates";

std::string read_template(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string render_as_transformers(const std::string& source,
                                   const nlohmann::ordered_json& variables = {}) {
  const Value v =
      Value::from_json(variables.is_null() ? nlohmann::ordered_json::object() : variables);
  return JinjaTemplate(source).render(*v.dict);
}

std::string transformers_error(const std::string& source) {
  try {
    const std::string out = render_as_transformers(source);
    ADD_FAILURE() << "no TemplateError: " << source << " rendered " << out.size() << " bytes";
  } catch (const TemplateError& e) {
    return e.what();
  }
  return {};
}

TEST(JinjaAsTransformers, IntegerDictKeysKeepTheirType) {
  // Before: keys became strings, printed quoted, and dictsort ordered '1', '10', '2'.
  EXPECT_EQ(render_as_transformers("{{ {0: 0, 512: 128} }}"), "{0: 0, 512: 128}");
  EXPECT_EQ(
      render_as_transformers("{{ {10: 'a', 2: 'b', 1: 'c'} | dictsort | map('first') | list }}"),
      "[1, 2, 10]");
  EXPECT_EQ(
      render_as_transformers("{% for k, v in {10: 'a', 2: 'b'} | dictsort %}{{ k + 1 }}{{ v }}"
                             "{% endfor %}"),
      "3b11a");
  // 0 and '0' are two keys; 1, 1.0 and True are one, as in Python.
  EXPECT_EQ(render_as_transformers(
                "{{ {0: 'int', '0': 'str'}[0] }} {{ {0: 'int', '0': 'str'}['0'] }} "
                "{{ {1: 'a', True: 'b'} }} {{ {1: 'x'}.get(1.0) }} {{ 512 in {512: 1} }}"),
            "int str {1: 'b'} x True");
  EXPECT_EQ(render_as_transformers("{{ {1: 2, 'k': {3: none} } | tojson }}"),
            R"({"1": 2, "k": {"3": null}})");
  EXPECT_EQ(render_as_transformers(
                "{{ {'B': 1, 'a': 2} | dictsort }} {{ {'B': 1, 'a': 2} | dictsort(true) }}"),
            "[['a', 2], ['B', 1]] [['B', 1], ['a', 2]]");
  EXPECT_NE(transformers_error("{{ {[1]: 2} }}").find("cannot be a dict key"), std::string::npos);
}

TEST(JinjaAsTransformers, SeedOssThinkingBudgetLooksUpIntegerKeys) {
  const JinjaTemplate t(read_template(kTemplateDir / "seed-oss-excerpt.jinja"));
  const nlohmann::ordered_json v = {
      {"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
      {"tools", nullptr},
      {"documents", nullptr},
      {"add_generation_prompt", true},
      {"thinking_budget", 600}};
  const Value variables = Value::from_json(v);
  EXPECT_EQ(t.render(*variables.dict),
            "<seed:bos>system\nBe brief.<seed:eos><seed:bos>system\nYou are an intelligent "
            "assistant with reflective ability. In the process of thinking and reasoning, you "
            "need to strictly follow the thinking budget, which is 600. That is, you need to "
            "complete your thinking within 600 tokens and start answering the user's "
            "questions. You will reflect on your thinking process every 256 tokens, stating how "
            "many tokens have been used and how many are left.\n<seed:eos><seed:bos>user\nHi"
            "<seed:eos><seed:bos>assistant\n");
}

TEST(JinjaAsTransformers, FiltersOverNoneYieldNothing) {
  // Jinja's select_or_reject and map begin `if value:`: none (and any falsy value) is empty.
  EXPECT_EQ(render_as_transformers(
                "{{ none | selectattr('type', 'equalto', 'x') | list }} "
                "{{ none | rejectattr('type') | list }} {{ none | select | list }} "
                "{{ none | reject('none') | list }} {{ none | map(attribute='a') | list }} "
                "{{ '' | map('upper') | list }} {{ x | select | list }}"),
            "[] [] [] [] [] [] []");
  EXPECT_NE(transformers_error("{% for t in none %}{% endfor %}").find("not iterable"),
            std::string::npos);
}

TEST(JinjaAsTransformers, FunctionaryV31RendersWithToolsNone) {
  // meetkai/functionary-medium-v3.1's template, as published (and in llama.cpp's
  // models/templates): `tools | selectattr(...)` with tools none.
  const JinjaTemplate t(read_template(kTemplateDir / "functionary-v3.1.jinja"));
  const Value variables = Value::from_json(nlohmann::ordered_json{
      {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
      {"tools", nullptr},
      {"documents", nullptr},
      {"add_generation_prompt", true},
      {"bos_token", "<|begin_of_text|>"}});
  EXPECT_EQ(t.render(*variables.dict),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n\nCutting Knowledge "
            "Date: December 2023\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi"
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

// Each of these allocated its result before the output limit was checked: indent
// (1,000,000,000) took 19 s and 3 GB, a large replace ended in std::bad_alloc. Now the
// size is checked first, so each fails with the limit's error (none builds past it).
TEST(JinjaAsTransformers, EveryFilterCountsTowardTheOutputLimitBeforeItAllocates) {
  const std::string big = "{% set s = 'x' * 1000000 %}";
  for (const std::string& source : {
           std::string("{{ 'a\\nb' | indent(1000000000) }}"),
           std::string("{{ 'a\\nb' | indent(1000000000, true) }}"),
           big + "{{ s | replace('x', s) }}",
           big + "{{ s.replace('x', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"
                 "yyyyyyyyyy') }}",
           big + "{{ range(100) | map('string') | join(s) }}",
           big + "{% set l = [s, s, s, s, s, s, s, s, s, s] %}{{ (l + l + l + l + l + l + l) | join }}",
           big + "{% set l = [s, s, s, s, s, s, s, s, s, s] %}{{ ','.join(l + l + l + l + l + l + l) }}",
           big + "{{ s * 100 }}",
           std::string("{{ 'ab' * 4611686018427387904 }}"),
           big + "{% set t = s * 40 %}{{ t ~ t }}",
           big + "{% set t = s * 40 %}{{ t + t }}",
           big + "{{ ('<' * 20000000) | e }}",
           std::string("{{ {'a': [1]} | tojson(indent=100000000000) }}"),
           // A list that holds another twice, ten times over: its text is 2^10 times s.
           big + "{% set a = [s] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}"
                 "{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}"
                 "{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{{ a }}",
       }) {
    const std::string error = transformers_error(source);
    EXPECT_NE(error.find("limit"), std::string::npos) << source.substr(0, 80) << ": " << error;
  }
}

// Python's Markup (safe and escape filters): adding a plain string escapes it, as
// functionary v3.1's template does to its tools' JSON ("..."|safe + tojson). Expected
// texts: jinja2 3.1.6 as transformers sets it up.
TEST(JinjaAsTransformers, MarkupPlusStringEscapesTheString) {
  EXPECT_EQ(render_as_transformers("{{ '<a>'|safe + '<b>' + '&'|safe }}"), "<a>&lt;b&gt;&");
  EXPECT_EQ(render_as_transformers("{{ 'x\"' + 'q'|safe }}"), "x&#34;q");
  EXPECT_EQ(render_as_transformers("{{ ('a'|safe + '\"') ~ '<' }}"), "a&#34;<");
  EXPECT_EQ(render_as_transformers("{{ '<'|e + '<' }}"), "&lt;&lt;");
  EXPECT_EQ(render_as_transformers("{{ '<'|e|e }}"), "&lt;");
  EXPECT_EQ(render_as_transformers("{{ '<' + '>' }}"), "<>");
}

// Python's Undefined converts to "" for the filters that work on text (Hermes 3's template
// trims a parameter's missing description); items of it are empty.
TEST(JinjaAsTransformers, TextFiltersTakeUndefinedAsEmpty) {
  EXPECT_EQ(render_as_transformers("{{ x|trim }}|{{ x|upper }}|{{ x|string }}|"
                                   "{{ x|replace('a','b') }}|{{ x|items|list }}|{{ x|e }}|"
                                   "{{ x|safe }}"),
            "||||[]||");
  EXPECT_NE(transformers_error("{{ x|tojson }}").find("'x' is undefined"), std::string::npos);
}

}  // namespace
}  // namespace baton::jinja::transformers_test
