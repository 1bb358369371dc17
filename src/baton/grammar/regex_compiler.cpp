#include "baton/grammar/regex_compiler.h"

#include <optional>

#include "baton/grammar/grammar_limits.h"
#include "baton/grammar/json_grammar.h"
#include "baton/grammar/utf8_ranges.h"

namespace baton::grammar {
namespace {

// Automaton states a pattern may expand to (repetitions multiply their body).
constexpr std::size_t kMaxPatternCost = 100'000;

struct Piece {
  Expr expr;
  std::size_t cost = 1;
};

class PatternParser {
 public:
  PatternParser(std::string_view pattern, CharEncoding encoding, PatternMatch match,
                Grammar* grammar)
      : p_(pattern), encoding_(encoding), match_(match), grammar_(grammar) {}

  Expr parse() {
    if (p_.size() > kMaxPatternLength)
      throw PatternError("pattern longer than " + std::to_string(kMaxPatternLength) + " bytes", 0);
    std::vector<Expr> branches;
    do {
      branches.push_back(top_branch());
    } while (eat('|'));
    if (at_ < p_.size()) fail(p_[at_] == ')' ? "unbalanced ')'" : "unexpected character");
    return choice(std::move(branches));
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw PatternError(message, at_); }
  bool more() const { return at_ < p_.size(); }
  char peek() const { return more() ? p_[at_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || !more()) return false;
    ++at_;
    return true;
  }

  Expr any_text() const {
    return star(encoding_ == CharEncoding::json_string
                    ? JsonGrammar::string_char()
                    : CharClass().complement(kMaxCodePoint).to_expr(encoding_));
  }

  // A top-level alternative: ^ and $ may open and close it.
  Expr top_branch() {
    const bool anchored_start = eat('^');
    Piece body = concat(true);
    const bool anchored_end = eat('$');
    if (more() && peek() != '|' && peek() != ')') fail("'$' before the end of the pattern");
    std::vector<Expr> parts;
    if (match_ == PatternMatch::search && !anchored_start) parts.push_back(any_text());
    parts.push_back(std::move(body.expr));
    if (match_ == PatternMatch::search && !anchored_end) parts.push_back(any_text());
    return sequence(std::move(parts));
  }

  Piece alternation() {
    std::vector<Expr> branches;
    std::size_t cost = 0;
    do {
      Piece branch = concat(false);
      cost += branch.cost;
      branches.push_back(std::move(branch.expr));
    } while (eat('|'));
    return Piece{.expr = choice(std::move(branches)), .cost = cost};
  }

  Piece concat(bool top) {
    std::vector<Expr> items;
    std::size_t cost = 0;
    while (more() && peek() != '|' && peek() != ')') {
      if (peek() == '$' && top) break;
      Piece item = quantified();
      cost += item.cost;
      if (cost > kMaxPatternCost) fail("pattern too large to compile");
      items.push_back(std::move(item.expr));
    }
    return Piece{.expr = sequence(std::move(items)), .cost = cost + 1};
  }

  Piece quantified() {
    Piece piece = atom();
    std::uint32_t min = 0;
    std::uint32_t max = kUnbounded;
    if (eat('*')) {
    } else if (eat('+')) {
      min = 1;
    } else if (eat('?')) {
      max = 1;
    } else if (!counted(min, max)) {
      return piece;
    }
    if (peek() == '+') fail("possessive quantifiers are not supported");
    eat('?');  // lazy: the same language
    if (peek() == '*' || peek() == '+' || peek() == '?') fail("multiple repeat");
    std::uint32_t ignored_min = 0;
    std::uint32_t ignored_max = 0;
    if (const std::size_t before = at_; counted(ignored_min, ignored_max)) {
      at_ = before;
      fail("multiple repeat");
    }
    const std::size_t times = max == kUnbounded ? std::max<std::uint32_t>(min, 1) : max;
    piece.cost = piece.cost * times + 1;
    if (piece.cost > kMaxPatternCost) fail("pattern too large to compile");
    piece.expr = repeat(std::move(piece.expr), min, max);
    return piece;
  }

  // {m}, {m,}, {m,n}; anything else leaves '{' a literal (as Python reads it).
  bool counted(std::uint32_t& min, std::uint32_t& max) {
    if (peek() != '{') return false;
    std::size_t i = at_ + 1;
    const auto number = [&]() -> std::optional<std::uint64_t> {
      const std::size_t start = i;
      std::uint64_t n = 0;
      while (i < p_.size() && p_[i] >= '0' && p_[i] <= '9' && i - start < 10)
        n = n * 10 + static_cast<std::uint64_t>(p_[i++] - '0');
      if (i == start) return std::nullopt;
      return n;
    };
    if (i < p_.size() && p_[i] == ',') fail("{,n}: a count to Python, literal text to ECMAScript");
    const auto lo = number();
    std::optional<std::uint64_t> hi = lo;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      hi = number();
      if (!hi) hi = kUnbounded;
    }
    if (!lo || i >= p_.size() || p_[i] != '}') return false;
    at_ = i + 1;
    if (*lo > kMaxRepeat || (*hi != kUnbounded && *hi > kMaxRepeat))
      fail("repetition count over " + std::to_string(kMaxRepeat));
    if (*lo > *hi) fail("repetition {m,n} with m > n");
    min = static_cast<std::uint32_t>(*lo);
    max = static_cast<std::uint32_t>(*hi);
    return true;
  }

  Piece atom() {
    const char c = peek();
    if (c == '(') return group();
    if (c == '[') return one(char_class());
    if (c == '.') {
      ++at_;
      return one(CharClass::any_but_newlines());
    }
    if (c == '\\') return one(escape(false));
    if (c == '^' || c == '$') fail("anchor inside the pattern");
    if (c == '*' || c == '+' || c == '?') fail("nothing to repeat");
    CharClass single;
    const std::uint32_t cp = literal_char();
    single.add(cp, cp);
    return one(single);
  }

  Piece one(const CharClass& set) const {
    static constexpr std::size_t kInlineUpTo = 16;  // expression nodes
    Expr e = set.to_expr(encoding_);
    const std::size_t cost = expr_size(e);
    if (grammar_ == nullptr || cost <= kInlineUpTo)
      return Piece{.expr = std::move(e), .cost = cost};
    std::string name = encoding_ == CharEncoding::json_string ? "class_json" : "class_raw";
    for (const auto& [lo, hi] : set.ranges())
      name += "_" + std::to_string(lo) + "_" + std::to_string(hi);
    const std::optional<RuleId> found = grammar_->find_rule(name);
    return Piece{.expr = ref(found ? *found : grammar_->add_rule(name, std::move(e))), .cost = 2};
  }

  Piece group() {
    static constexpr int kMaxGroupDepth = 64;
    if (++group_depth_ > kMaxGroupDepth) fail("groups nested deeper than 64");
    ++at_;  // (
    if (eat('?')) {
      if (eat(':')) {
      } else if (peek() == 'P' && at_ + 1 < p_.size() && p_[at_ + 1] == '<') {
        at_ += 2;
        skip_name();
      } else if (peek() == '<' && at_ + 1 < p_.size() && p_[at_ + 1] != '=' && p_[at_ + 1] != '!') {
        ++at_;
        skip_name();
      } else if (peek() == '=' || peek() == '!' || peek() == '<') {
        fail("lookaround is not supported");
      } else if (peek() == 'P' && at_ + 1 < p_.size() && p_[at_ + 1] == '=') {
        fail("backreferences are not supported");
      } else {
        fail("inline flags and other (?...) groups are not supported");
      }
    }
    Piece inner = alternation();
    if (!eat(')')) fail("missing ')'");
    --group_depth_;
    return inner;
  }

  void skip_name() {
    while (more() && peek() != '>') ++at_;
    if (!eat('>')) fail("unterminated group name");
  }

  std::uint32_t literal_char() {
    const auto b = static_cast<unsigned char>(p_[at_]);
    const std::size_t n = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
    if (n == 0 || at_ + n > p_.size()) fail("pattern is not valid UTF-8");
    std::uint32_t cp = n == 1 ? b : b & (0xFF >> (n + 1));
    for (std::size_t k = 1; k < n; ++k) {
      const auto cont = static_cast<unsigned char>(p_[at_ + k]);
      if ((cont & 0xC0) != 0x80) fail("pattern is not valid UTF-8");
      cp = (cp << 6) | (cont & 0x3F);
    }
    at_ += n;
    return cp;
  }

  std::uint32_t hex(std::size_t digits) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < digits; ++k, ++at_) {
      const char h = peek();
      if (!more() || !std::isxdigit(static_cast<unsigned char>(h))) fail("bad hex escape");
      v = v * 16 + static_cast<std::uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return v;
  }

  // After '\': one character or a class. `in_class`: \b is a backspace there.
  CharClass escape(bool in_class) {
    ++at_;
    if (!more()) fail("pattern ends with '\\'");
    const char c = p_[at_++];
    CharClass out;
    const auto single = [&](std::uint32_t cp) {
      out.add(cp, cp);
      return out;
    };
    switch (c) {
      case 'd':
        return CharClass::digits();
      case 'w':
        return CharClass::word();
      case 's':
        space_ = true;
        return CharClass::space();
      case 'D':
        shorthand_ = true;
        return CharClass::digits().complement(0x7F);
      case 'W':
        shorthand_ = true;
        return CharClass::word().complement(0x7F);
      case 'S':
        shorthand_ = true;
        return python_space().complement(0x7F);
      case 'n':
        return single('\n');
      case 't':
        return single('\t');
      case 'r':
        return single('\r');
      case 'f':
        return single('\f');
      case 'v':
        return single('\v');
      case '0':
        return single(0);
      case 'x':
        return single(hex(2));
      case 'u': {
        const std::uint32_t cp = hex(4);
        if (cp >= 0xD800 && cp <= 0xDFFF) fail("surrogate escape");
        return single(cp);
      }
      case 'b':
        if (in_class) return single('\b');
        fail("\\b (word boundary) is not supported");
      default:
        break;
    }
    if (c >= '1' && c <= '9') fail("backreferences are not supported");
    if (std::isalnum(static_cast<unsigned char>(c)))
      fail(std::string("escape \\") + c + " is not supported");
    --at_;
    return single(literal_char());
  }

  CharClass char_class() {
    ++at_;  // [
    const bool negated = eat('^');
    shorthand_ = false;
    space_ = false;
    if (peek() == ']') fail("[] and []...]: an empty class to ECMAScript, ']' to Python");
    CharClass set;
    while (more() && peek() != ']') {
      const bool was_escape = peek() == '\\';
      CharClass lo = was_escape ? escape(true) : CharClass();
      if (!was_escape) {
        const std::uint32_t cp = literal_char();
        lo.add(cp, cp);
      }
      const bool single = lo.ranges().size() == 1 && lo.ranges()[0].first == lo.ranges()[0].second;
      if (single && peek() == '-' && at_ + 1 < p_.size() && p_[at_ + 1] != ']') {
        ++at_;
        CharClass hi_set = peek() == '\\' ? escape(true) : CharClass();
        if (hi_set.empty()) {
          const std::uint32_t cp = literal_char();
          hi_set.add(cp, cp);
        }
        if (hi_set.ranges().size() != 1 || hi_set.ranges()[0].first != hi_set.ranges()[0].second)
          fail("bad range in a class");
        const std::uint32_t a = lo.ranges()[0].first;
        const std::uint32_t b = hi_set.ranges()[0].first;
        if (a > b) fail("bad range in a class");
        set.add(a, b);
      } else {
        if (was_escape && !single) shorthand_ = true;
        set.add(lo);
      }
    }
    if (!eat(']')) fail("missing ']'");
    if (!negated) return set;
    if (space_) set.add(python_space());
    // Python's negated classes of \d \w \s exclude Unicode digits, letters and spaces that
    // ECMAScript's include: keep to ASCII, which both agree on.
    return set.complement(shorthand_ ? 0x7F : kMaxCodePoint);
  }

  // Python's \s also matches \x1c-\x1f (ECMAScript's does not): its negations leave them out.
  static CharClass python_space() {
    CharClass s = CharClass::space();
    s.add(0x1C, 0x1F);
    return s;
  }

  std::string_view p_;
  CharEncoding encoding_;
  PatternMatch match_;
  Grammar* grammar_;
  std::size_t at_ = 0;
  int group_depth_ = 0;
  bool shorthand_ = false;  // a negated class holds \d \w \s or a negation
  bool space_ = false;      // it holds \s
};

}  // namespace

Expr compile_pattern(std::string_view pattern, CharEncoding encoding, PatternMatch match,
                     Grammar* grammar) {
  return PatternParser(pattern, encoding, match, grammar).parse();
}

}  // namespace baton::grammar
