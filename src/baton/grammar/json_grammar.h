// The pieces of JSON as grammar expressions, added to one Grammar (each shared rule once):
// strings, numbers, any value, any object, and the whitespace between JSON tokens.
// Layout: compact JSON, as models write it, with whitespace allowed wherever JSON allows it
// but at most JsonLayout::max_whitespace bytes of [ \t\n\r] in a row, so pretty-printed JSON
// still matches and a model cannot pad forever. Numbers have at most 18 integer digits, 15
// fraction digits and 3 exponent digits. Strings are valid UTF-8; escapes are JSON's, with
// \u escapes of surrogates refused (they would make character counts differ).
// Thread-safety: a JsonGrammar writes into its Grammar; one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "baton/grammar/grammar.h"

namespace baton::grammar {

struct JsonLayout {
  std::uint32_t max_whitespace = 16;  // bytes of whitespace in a row between JSON tokens
};

inline constexpr std::uint32_t kMaxIntegerDigits = 18;
inline constexpr std::uint32_t kMaxFractionDigits = 15;

class JsonGrammar {
 public:
  explicit JsonGrammar(Grammar& grammar, JsonLayout layout = {});

  Grammar& grammar() { return grammar_; }
  const JsonLayout& layout() const { return layout_; }

  // Whitespace between tokens (inline).
  Expr ws() const;
  // One character of a string's content, in any of JSON's encodings (inline).
  static Expr string_char();
  // Hex digit, and the four after \u (no surrogate).
  static Expr hex_escape_digits();
  // A string with quotes, of any content (a shared rule).
  Expr string();
  // A string of min..max characters (max kUnbounded: any).
  Expr string_of_length(std::uint32_t min, std::uint32_t max);
  // The exact string `text` (UTF-8), with quotes, escaped as json.dumps without
  // ensure_ascii writes it.
  static Expr string_literal(std::string_view text);
  Expr number();   // a shared rule
  Expr integer();  // a shared rule
  Expr boolean() const;
  Expr null() const;
  // Any JSON value, object or array (shared, recursive rules).
  Expr value();
  Expr object();
  Expr array();
  // Exactly the value `v` (enum, const), with whitespace between its tokens as ws() allows.
  Expr constant(const nlohmann::ordered_json& v) const;
  // "key" ws : ws value
  Expr member(Expr key, Expr value) const;

 private:
  RuleId shared(std::string_view name, const std::function<Expr()>& make);
  Expr make_string();
  Expr make_number();
  Expr make_integer();
  Expr make_value();
  Expr make_object();
  Expr make_array();
  std::string suffix() const;

  Grammar& grammar_;
  JsonLayout layout_;
};

// The JSON text of a string (quotes included) as json.dumps(ensure_ascii=False) writes it.
std::string json_quote(std::string_view text);

}  // namespace baton::grammar
