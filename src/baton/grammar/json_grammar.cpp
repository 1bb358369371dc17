#include "baton/grammar/json_grammar.h"

#include "baton/grammar/utf8_ranges.h"

namespace baton::grammar {

JsonGrammar::JsonGrammar(Grammar& grammar, JsonLayout layout)
    : grammar_(grammar), layout_(layout) {}

Expr JsonGrammar::ws() const {
  if (layout_.max_whitespace == 0) return empty();
  return repeat(any_of(" \t\n\r"), 0, layout_.max_whitespace);
}

Expr JsonGrammar::hex_escape_digits() {
  const Expr hex = choice({byte_range('0', '9'), byte_range('a', 'f'), byte_range('A', 'F')});
  // Not D800..DFFF: a lone surrogate is not a character, a pair would count as two.
  const Expr not_d =
      choice({byte_range('0', '9'), byte_range('a', 'c'), byte_range('A', 'C'), any_of("eEfF")});
  return choice(
      {sequence({not_d, hex, hex, hex}), sequence({any_of("dD"), byte_range('0', '7'), hex, hex})});
}

Expr JsonGrammar::string_char() {
  ByteSet plain;
  for (unsigned b = 0x20; b < 0x80; ++b) plain.set(b);
  plain.reset('"');
  plain.reset('\\');
  return choice({bytes(plain),
                 sequence({byte_of('\\'), choice({any_of("\"\\/bfnrt"),
                                                  sequence({byte_of('u'), hex_escape_digits()})})}),
                 utf8_range(0x80, kMaxCodePoint)});
}

std::string JsonGrammar::suffix() const { return "_ws" + std::to_string(layout_.max_whitespace); }

RuleId JsonGrammar::shared(std::string_view name, const std::function<Expr()>& make) {
  if (const auto found = grammar_.find_rule(name)) return *found;
  const RuleId rule = grammar_.declare(name);
  grammar_.define(rule, make());
  return rule;
}

Expr JsonGrammar::make_string() {
  return sequence({byte_of('"'), star(string_char()), byte_of('"')});
}

Expr JsonGrammar::string() {
  return ref(shared("json_string", [this] { return make_string(); }));
}

Expr JsonGrammar::string_of_length(std::uint32_t min, std::uint32_t max) {
  if (min == 0 && max == kUnbounded) return string();
  // Short bounds inline; long ones call a one-character rule, so the size stays linear.
  static constexpr std::uint32_t kInlineUpTo = 32;
  const bool inline_chars = (max == kUnbounded ? min : max) <= kInlineUpTo;
  Expr one = inline_chars ? string_char() : ref(shared("json_char", [] { return string_char(); }));
  return sequence({byte_of('"'), repeat(std::move(one), min, max), byte_of('"')});
}

std::string json_quote(std::string_view text) {
  // nlohmann escapes as json.dumps(ensure_ascii=False) does: \" \\ \b \f \n \r \t, other
  // control characters as \u00xx.
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expr JsonGrammar::string_literal(std::string_view text) { return literal(json_quote(text)); }

Expr JsonGrammar::make_integer() {
  return sequence(
      {optional(byte_of('-')),
       choice({byte_of('0'), sequence({byte_range('1', '9'),
                                       repeat(byte_range('0', '9'), 0, kMaxIntegerDigits - 1)})})});
}

Expr JsonGrammar::make_number() {
  const Expr digit = byte_range('0', '9');
  return sequence(
      {make_integer(), optional(sequence({byte_of('.'), repeat(digit, 1, kMaxFractionDigits)})),
       optional(sequence({any_of("eE"), optional(any_of("+-")), repeat(digit, 1, 3)}))});
}

Expr JsonGrammar::number() {
  return ref(shared("json_number", [this] { return make_number(); }));
}
Expr JsonGrammar::integer() {
  return ref(shared("json_integer", [this] { return make_integer(); }));
}
Expr JsonGrammar::boolean() const { return choice({literal("true"), literal("false")}); }
Expr JsonGrammar::null() const { return literal("null"); }

Expr JsonGrammar::member(Expr key, Expr value) const {
  return sequence({std::move(key), ws(), byte_of(':'), ws(), std::move(value)});
}

Expr JsonGrammar::constant(const nlohmann::ordered_json& v) const {
  if (v.is_string()) return string_literal(v.get<std::string>());
  if (!v.is_structured()) return literal(v.dump());
  const Expr sep = sequence({ws(), byte_of(','), ws()});
  std::vector<Expr> items{byte_of(v.is_object() ? '{' : '['), ws()};
  bool first = true;
  for (const auto& [key, value] : v.items()) {
    if (!first) items.push_back(sep);
    first = false;
    items.push_back(v.is_object() ? member(string_literal(key), constant(value)) : constant(value));
  }
  items.push_back(ws());
  items.push_back(byte_of(v.is_object() ? '}' : ']'));
  return sequence(std::move(items));
}

Expr JsonGrammar::make_value() {
  return choice({object(), array(), string(), number(), boolean(), null()});
}

Expr JsonGrammar::make_object() {
  const Expr one = member(string(), value());
  return sequence({byte_of('{'), ws(),
                   optional(sequence({one, star(sequence({ws(), byte_of(','), ws(), one}))})), ws(),
                   byte_of('}')});
}

Expr JsonGrammar::make_array() {
  return sequence(
      {byte_of('['), ws(),
       optional(sequence({value(), star(sequence({ws(), byte_of(','), ws(), value()}))})), ws(),
       byte_of(']')});
}

Expr JsonGrammar::value() {
  return ref(shared("json_value" + suffix(), [this] { return make_value(); }));
}
Expr JsonGrammar::object() {
  return ref(shared("json_object" + suffix(), [this] { return make_object(); }));
}
Expr JsonGrammar::array() {
  return ref(shared("json_array" + suffix(), [this] { return make_array(); }));
}

}  // namespace baton::grammar
