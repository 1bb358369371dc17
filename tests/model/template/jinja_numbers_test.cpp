// Integer and float edge values in baton's Jinja engine (issue 46): Python's integers are
// unbounded, baton's are 64-bit, so every result that leaves int64 is a TemplateError
// where it used to be undefined behaviour (SIGFPE on INT64_MIN // -1, a wrapped product,
// a float cast out of range). Expected values are Python's (python3 -c 'print(...)').
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "baton/model/template/jinja_template.h"

// A namespace of its own: the unity build compiles this file beside jinja_test.cpp.
namespace baton::jinja::numbers_test {
namespace {

std::string render_numbers(const std::string& source) { return JinjaTemplate(source).render({}); }

std::string numbers_error(const std::string& source) {
  try {
    const std::string out = render_numbers(source);
    ADD_FAILURE() << "no TemplateError: " << source << " rendered " << out;
  } catch (const TemplateError& e) {
    return e.what();
  }
  return {};
}

bool says(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

constexpr const char* kMin = "(-9223372036854775807 - 1)";

TEST(JinjaNumbers, IntegerOverflowIsAnErrorNotACrash) {
  const std::string min = kMin;
  // SIGFPE before: INT64_MIN // -1 traps on x86.
  EXPECT_TRUE(says(numbers_error("{{ " + min + " // -1 }}"), "integer overflow in '//'"));
  EXPECT_EQ(render_numbers("{{ " + min + " % -1 }} {{ 7 % -1 }}"), "0 0");
  EXPECT_TRUE(says(numbers_error("{{ 9223372036854775807 + 1 }}"), "integer overflow in '+'"));
  EXPECT_TRUE(says(numbers_error("{{ " + min + " - 1 }}"), "integer overflow in '-'"));
  EXPECT_TRUE(
      says(numbers_error("{{ 4384754637000000 * 438475463720 }}"), "integer overflow in '*'"));
  EXPECT_TRUE(says(numbers_error("{{ -" + min + " }}"), "integer overflow in '-'"));
  EXPECT_TRUE(says(numbers_error("{{ 2 ** 63 }}"), "integer overflow in '**'"));
  EXPECT_TRUE(says(numbers_error("{{ 10 ** 19 }}"), "integer overflow in '**'"));
  EXPECT_TRUE(says(numbers_error("{{ " + min + " | abs }}"), "integer overflow"));
  EXPECT_TRUE(says(numbers_error("{{ [9223372036854775807, 1] | sum }}"), "integer overflow"));
  EXPECT_TRUE(says(numbers_error("{{ 99999999999999999999 }}"), "out of range"));
  EXPECT_TRUE(says(numbers_error("{{ '99999999999999999999' | int }}"), "out of 64-bit range"));
}

TEST(JinjaNumbers, ResultsInRangeAreExactAsPython) {
  EXPECT_EQ(
      render_numbers("{{ 2 ** 62 }} {{ (-2) ** 63 }} {{ 3 ** 39 }} {{ 2 ** -1 }} {{ 0 ** 0 }}"),
      "4611686018427387904 -9223372036854775808 4052555153018976267 0.5 1");
  // ((x % y) + y) % y overflowed for a large divisor.
  EXPECT_EQ(render_numbers("{{ -5 % 9223372036854775807 }} {{ 5 % -9223372036854775807 }}"),
            "9223372036854775802 -9223372036854775802");
  EXPECT_EQ(render_numbers("{{ -7 // 2 }} {{ 7 // -2 }} {{ -7 % 2 }} {{ 7 % -2 }}"), "-4 -4 1 -1");
  EXPECT_EQ(render_numbers("{{ -7.5 // 2 }} {{ 7.5 % -2 }} {{ -0.0 % 5 }} {{ 5.0 % -2.5 }}"),
            "-4.0 -0.5 0.0 -0.0");
  EXPECT_EQ(render_numbers("{{ range(9223372036854775800, 9223372036854775807, 5) | list }}"),
            "[9223372036854775800, 9223372036854775805]");
  EXPECT_EQ(render_numbers("{{ 1.5 | round(400) }} {{ 123.0 | round(-400) }}"), "1.5 0.0");
  EXPECT_EQ(render_numbers(
                "{{ ' 42.7 ' | int }} {{ 'x' | int(5) }} {{ '1e88' | float }} {{ '+7' | int }}"),
            "42 5 1e+88 7");
}

TEST(JinjaNumbers, FloatsWithoutAnIntegerValueAreErrors) {
  // A float cast to int64 out of range is undefined behaviour; it printed a garbage integer.
  EXPECT_TRUE(says(numbers_error("{{ (1e308 * 10) | int }}"), "the float inf has no 64-bit"));
  EXPECT_TRUE(says(numbers_error("{{ 1e88 | int }}"), "the float 1e+88 has no 64-bit"));
  EXPECT_TRUE(says(numbers_error("{{ -9.3e18 | int }}"), "has no 64-bit integer value"));
  EXPECT_TRUE(says(numbers_error("{{ '1e88' | int }}"), "has no 64-bit integer value"));
  // As Jinja: int(nan) is a ValueError, which the filter turns into its default.
  EXPECT_EQ(render_numbers("{{ (1e308 * 10 - 1e308 * 10) | int }} {{ -9.2e18 | int }}"),
            "0 -9200000000000000000");
  EXPECT_TRUE(says(numbers_error("{{ 10.0 ** 400 }}"), "overflows a float"));
  EXPECT_TRUE(says(numbers_error("{{ 0.0 ** -1 }}"), "negative power"));
  EXPECT_TRUE(says(numbers_error("{{ (-8.0) ** 0.5 }}"), "fractional power"));
  EXPECT_EQ(render_numbers("{{ 1e308 * 10 }} {{ -1e308 * 10 }}"), "inf -inf");
}

// The inputs a 12-minute jinja_fuzz run (UBSan) found undefined behaviour with, kept as
// seeds in fuzz/corpus/jinja: each is now an overflow error. Rendered with the variables
// the fuzz target gives.
TEST(JinjaNumbers, FuzzFindingsAreOverflowErrors) {
  const std::filesystem::path corpus =
      std::filesystem::path(BATON_TEST_DATA) / ".." / ".." / "fuzz" / "corpus" / "jinja";
  const Value variables = Value::from_json(nlohmann::ordered_json::parse(R"({
      "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
      "tools": [], "add_generation_prompt": true, "bos_token": "<s>"})"));
  int findings = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    if (!entry.path().filename().string().starts_with("crash-")) continue;
    ++findings;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    try {
      const std::string out = JinjaTemplate(text.str()).render(*variables.dict);
      ADD_FAILURE() << entry.path() << " rendered " << out.size() << " bytes";
    } catch (const TemplateError& e) {
      EXPECT_TRUE(says(e.what(), "integer overflow")) << entry.path() << ": " << e.what();
    }
  }
  EXPECT_EQ(findings, 11);
}

}  // namespace
}  // namespace baton::jinja::numbers_test
