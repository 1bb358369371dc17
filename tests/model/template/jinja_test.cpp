// baton's Jinja engine against an independent one: tests/data/chat_templates holds the
// chat templates of published models (Qwen3, Llama 3.2, Gemma 2, Granite 3.3, Phi-3.5,
// Mistral Nemo, DeepSeek V3.1, Hermes 3) and what Hugging Face's @huggingface/jinja
// rendered for six conversations each, with tools, tool calls, a system message, many
// turns and add_generation_prompt false (scripts/reference/make_chat_template_reference.mjs).
// Where that engine departs from Python's Jinja (which transformers runs), baton follows
// Python, and the case says why. The rest checks Python's semantics directly.
#include "baton/model/template/jinja_template.h"

#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace baton::jinja {
namespace {

const std::filesystem::path kTemplateDir =
    std::filesystem::path(BATON_TEST_DATA) / "chat_templates";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where @huggingface/jinja and Python's Jinja disagree; baton does what Python does.
bool python_renders_where_the_reference_fails(const std::string& name, const std::string& error) {
  // Python's Undefined iterates as empty, and trims as "" (a parameter without a
  // description); the reference refuses both. tool_reference.json (Python's jinja2) has
  // the texts (tests/model/chat/tool_render_test.cpp).
  return name == "hermes3-tool-use" && (error.find("for loop") != std::string::npos ||
                                        error.find("filter \"trim\"") != std::string::npos);
}
bool python_fails_where_the_reference_renders(const std::string& name, const std::string& c) {
  // The template adds a string and the call's arguments, a dict: Python raises TypeError,
  // JavaScript concatenates "[object Object]".
  return name == "deepseek-v3.1" && c == "a tool call and its result";
}

// The reference's strftime_now: a fixed day, 2026-12-04 (the generator passes the same),
// for the templates that print today's date (Granite 3.3; Llama 3.x without date_string).
Value fixed_strftime_now() {
  return Value::from(Function([](const CallArgs& args) {
    std::tm day{};
    day.tm_year = 2026 - 1900;
    day.tm_mon = 11;
    day.tm_mday = 4;
    day.tm_hour = 12;
    day.tm_wday = 5;  // a Friday
    char buffer[128];
    const std::string format = args.positional.empty() ? "" : args.positional[0].str();
    return Value::from(
        std::string(buffer, std::strftime(buffer, sizeof buffer, format.c_str(), &day)));
  }));
}

TEST(JinjaReference, PublishedChatTemplatesRenderAsTheReference) {
  std::ifstream in(kTemplateDir / "reference.json");
  const auto reference = nlohmann::ordered_json::parse(in);
  ASSERT_GE(reference.size(), 48u);
  int compared = 0;
  for (const auto& entry : reference) {
    const std::string name = entry["template"];
    const std::string what = name + " / " + entry["case"].get<std::string>();
    const JinjaTemplate t(read_text(kTemplateDir / (name + ".jinja")));
    Value variables = Value::from_json(entry["variables"]);
    variables.dict->emplace_back(Value::from("strftime_now"), fixed_strftime_now());
    if (entry.contains("output") &&
        !python_fails_where_the_reference_renders(name, entry["case"])) {
      EXPECT_EQ(t.render(*variables.dict), entry["output"].get<std::string>()) << what;
      ++compared;
    } else if (entry.contains("error") &&
               python_renders_where_the_reference_fails(name, entry["error"])) {
      EXPECT_NO_THROW(t.render(*variables.dict)) << what;
    } else {
      EXPECT_THROW(t.render(*variables.dict), TemplateError) << what;
    }
  }
  EXPECT_GE(compared, 38);
}

std::string render(const std::string& source, const nlohmann::ordered_json& variables = {}) {
  const Value v =
      Value::from_json(variables.is_null() ? nlohmann::ordered_json::object() : variables);
  return JinjaTemplate(source).render(*v.dict);
}

std::string error_of(const std::string& source, const nlohmann::ordered_json& variables = {}) {
  try {
    render(source, variables);
  } catch (const TemplateError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no TemplateError: " << source;
  return {};
}

TEST(Jinja, WhitespaceAsTransformersRendersIt) {
  // trim_blocks: the newline after a block tag goes; lstrip_blocks: the indentation
  // before one; "-" strips all whitespace on its side; print tags keep theirs.
  EXPECT_EQ(render("{% if true %}\n  a\n{% endif %}\n"), "  a\n");
  EXPECT_EQ(render("x\n    {% if true %}y{% endif %}"), "x\ny");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif %}  c"), "ab  c");
  EXPECT_EQ(render("{{ 'a' }}\n{{ 'b' -}}\n  c"), "a\nbc");
  EXPECT_EQ(render("a {# note #}\nb"), "a b");
  EXPECT_EQ(render("{%+ if true %}x{% endif %}"), "x");
  EXPECT_EQ(render("{% raw %}{{ kept }}{% endraw %}"), "{{ kept }}");
}

TEST(Jinja, ValuesPrintAsPython) {
  EXPECT_EQ(render("{{ 1 }} {{ 1.0 }} {{ 2.5e-7 }} {{ none }} {{ true }} {{ undefined_name }}|"),
            "1 1.0 2.5e-07 None True |");
  EXPECT_EQ(render("{{ [1, 'a', none] }} {{ {'k': false} }} {{ (1, 2) }}"),
            "[1, 'a', None] {'k': False} [1, 2]");
  EXPECT_EQ(render("{{ \"it's\" }} {{ ['it\\'s'] }}"), "it's [\"it's\"]");
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}"),
            "3 -4 1 2 3.5 1024");
  EXPECT_EQ(render("{{ 'ab' ~ 1 ~ none }} {{ 'x' * 3 }} {{ [1] + [2] }}"), "ab1None xxx [1, 2]");
}

TEST(Jinja, ToJsonIsPythonsJsonDumps) {
  const nlohmann::ordered_json v = {{"tool", {{"b", 1}, {"a", {1.5, "é\n\"", nullptr, true}}}}};
  EXPECT_EQ(render("{{ tool | tojson }}", v), R"({"b": 1, "a": [1.5, "é\n\"", null, true]})");
  EXPECT_EQ(render("{{ tool | tojson(indent=2) }}", v),
            "{\n  \"b\": 1,\n  \"a\": [\n    1.5,\n    \"é\\n\\\"\",\n"
            "    null,\n    true\n  ]\n}");
  EXPECT_EQ(render("{{ [] | tojson }} {{ {} | tojson(indent=4) }}"), "[] {}");
}

TEST(Jinja, LoopsNamespacesAndScopes) {
  const nlohmann::ordered_json v = {{"xs", {"a", "b", "c"}}};
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index }}{{ x }}{{ '|' if not loop.last }}"
                   "{% endfor %}",
                   v),
            "1a|2b|3c");
  EXPECT_EQ(render("{% for x in xs if x != 'b' %}{{ loop.index0 }}/{{ loop.length }}"
                   "{% else %}none{% endfor %}",
                   v),
            "0/21/2");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in xs %}{% if x == 'b' %}{% break %}{% endif %}{{ x }}{% endfor %}"
                   "{% for x in xs %}{% if x == 'b' %}{% continue %}{% endif %}{{ x }}{% endfor %}",
                   v),
            "aac");
  // A set inside a loop stays in the loop; a namespace carries it out.
  EXPECT_EQ(render("{% set n = 0 %}{% set ns = namespace(n=0) %}{% for x in xs %}"
                   "{% set n = n + 1 %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ n }} {{ ns.n }}",
                   v),
            "0 3");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"),
            "a=1;b=2;");
  EXPECT_EQ(render("{% set s %}block {{ 1 + 1 }}{% endset %}[{{ s }}]"), "[block 2]");
}

TEST(Jinja, MacrosFiltersTestsAndMethods) {
  EXPECT_EQ(
      render("{% macro m(a, b='d') %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }} {{ m(1, b=2) }}"),
      "1-d 1-2");
  EXPECT_EQ(render("{{ '  x y \\n' | trim }}|{{ ' a,b ,c '.split(',') }}|{{ 'a  b'.split() }}"),
            "x y|[' a', 'b ', 'c ']|['a', 'b']");
  EXPECT_EQ(render("{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x', 'lo')) }} "
                   "{{ 'a-b'.replace('-', '+') }} {{ 'xaby'.strip('xy') }} {{ 'ab' | upper }}"),
            "True True a+b ab AB");
  const nlohmann::ordered_json v = {{"ms",
                                     {{{"role", "system"}, {"c", 1}},
                                      {{"role", "user"}, {"c", 2}},
                                      {{"role", "user"}, {"c", 3}}}}};
  EXPECT_EQ(render("{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='c') | list }} "
                   "{{ ms | rejectattr('role', 'eq', 'user') | list | length }} "
                   "{{ ms | map(attribute='role') | unique | join(',') }} {{ ms[1:] | length }} "
                   "{{ ms[-1].c }} {{ ms[::-1][0]['c'] }} {{ (ms | last).role }}",
                   v),
            "[2, 3] 1 system,user 2 3 3 user");
  EXPECT_EQ(render("{{ x is defined }} {{ none is none }} {{ 'a' is string }} {{ {} is mapping }} "
                   "{{ 3 is odd }} {{ 4 is divisibleby 2 }} {{ x is not defined }} "
                   "{{ 'b' in 'abc' }} {{ 'k' in {'k': 1} }} {{ 2 not in [1] }}"),
            "False True True True True True True True True True");
  EXPECT_EQ(render("{{ x | default('d') }} {{ '' | default('e', true) }} {{ {'a': 1}.get('b', 0) }}"
                   " {{ [3, 1, 2] | sort | list }} {{ 'a\\nb' | indent(2) }} {{ -3 | abs }}"),
            "d e 0 [1, 2, 3] a\n  b 3");
}

TEST(Jinja, ErrorsNameTheLineAndLimitsHold) {
  EXPECT_NE(error_of("a\n{{ raise_exception('no system role') }}").find("no system role"),
            std::string::npos);
  EXPECT_EQ(error_of("a\n\n{{ x.y }}").rfind("line 3: 'x' is undefined", 0), 0u);
  EXPECT_EQ(error_of("{% if %}").rfind("line 1:", 0), 0u);
  EXPECT_NE(error_of("{% for x in y %}").find("missing 'else'"), std::string::npos);
  EXPECT_NE(error_of("{% frobnicate %}").find("unknown tag 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 | nosuchfilter }}").find("unknown filter 'nosuchfilter'"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'a' + 1 }}").find("cannot apply '+'"), std::string::npos);
  EXPECT_NE(error_of("{{ 1 / 0 }}").find("division by zero"), std::string::npos);
  // Runaway templates stop with an error instead of taking the machine.
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("nest too deep"),
            std::string::npos);
  EXPECT_NE(error_of("{% for i in range(100000000) %}{% endfor %}").find("100,000 items"),
            std::string::npos);
  EXPECT_NE(error_of("{% for i in range(99999) %}{% for j in range(99) %}{% endfor %}"
                     "{% endfor %}")
                .find("runs too long"),
            std::string::npos);
  EXPECT_NE(error_of("{{ 'x' * 100000000 }}").find("output limit"), std::string::npos);
  // An empty string repeated 2^63 - 1 times is empty at once (jinja_fuzz found it hanging).
  EXPECT_EQ(render("[{{ '' * 9223372036854775807 }}][{{ 'x' * -3 }}]"), "[][]");
  // Values are shared, not garbage-collected: no reference cycles (found by jinja_fuzz).
  EXPECT_NE(error_of("{% set ns = namespace(n=0) %}{% set ns.n = [ns] %}").find("hold itself"),
            std::string::npos);
  EXPECT_EQ(render("{% set ns = namespace(a=namespace(b=1)) %}{% set ns.a = ns.a %}{{ ns.a.b }}"),
            "1");
}

}  // namespace
}  // namespace baton::jinja
