// Where a JSON value ends in a growing text: the whole-text scan against nlohmann's
// parser, and the piecewise scanner against the whole-text scan.
#include "baton/model/chat/json_span.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace baton {
namespace json_span_test {  // named: the unity build batches test files
namespace {

TEST(JsonSpan, EndsWhereTheValueEnds) {
  const std::string value = R"({"a": [1, "x]}\"y", {"b": {}}], "c": "\\"})";
  ASSERT_TRUE(nlohmann::json::accept(value));
  const std::string text = value + " trailing";
  JsonSpan span = json_value_span(text, 0);
  EXPECT_EQ(span.state, JsonSpanState::complete);
  EXPECT_EQ(span.end, value.size());
  for (std::size_t cut = 1; cut < value.size(); ++cut) {
    EXPECT_EQ(json_value_span(value.substr(0, cut), 0).state, JsonSpanState::partial) << cut;
  }
  EXPECT_EQ(json_value_span("[1}", 0).state, JsonSpanState::invalid);
  EXPECT_EQ(json_value_span("?", 0).state, JsonSpanState::invalid);
  EXPECT_EQ(json_value_span("12", 0).state, JsonSpanState::partial);  // more digits may come
  EXPECT_EQ(json_value_span("12,", 0).end, 2u);
  EXPECT_EQ(json_value_span(std::string(200, '['), 0).state, JsonSpanState::invalid);
  EXPECT_EQ(json_nesting_depth(R"([{"[": [1]}])"), 3);
}

TEST(JsonSpan, PiecewiseScannerAgreesWithTheWholeScan) {
  std::mt19937 random(11);
  const std::string alphabet = "{}[]\"\\ a1,:";
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text = random() % 2 ? "{" : "[";
    const std::size_t length = random() % 40;
    for (std::size_t i = 0; i < length; ++i) text += alphabet[random() % alphabet.size()];
    const JsonSpan whole = json_value_span(text, 0);
    JsonContainerScanner scanner;
    JsonSpan pieces{};
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t n = 1 + random() % 5;
      pieces = scanner.feed(std::string_view(text).substr(at, n));
      at += n;
    }
    ASSERT_EQ(pieces.state, whole.state) << text;
    if (whole.state == JsonSpanState::complete) {
      EXPECT_EQ(pieces.end, whole.end) << text;
    }
  }
}

}  // namespace
}  // namespace json_span_test
}  // namespace baton
