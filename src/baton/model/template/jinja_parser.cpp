#include "baton/model/template/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

#include "baton/model/template/jinja_lexer.h"

namespace baton::jinja {
namespace {

using K = Token::Kind;

// Bounds on nesting, so that parsing, rendering and freeing the tree stay well inside the
// stack (a template is data from a model directory).
constexpr int kMaxExprDepth = 128;
constexpr int kMaxBlockDepth = 48;

ExprPtr make_expr(Expr::Kind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

NodePtr make_node(Node::Kind kind, int line) {
  auto n = std::make_unique<Node>();
  n->kind = kind;
  n->line = line;
  return n;
}

// Names that end an expression where a test's bare argument could start.
bool is_keyword(const std::string& name) {
  static const char* const kKeywords[] = {"and", "or", "not", "in", "is", "if", "else"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body run() {
    Body body = parse_body({});
    if (peek().kind != K::end) fail("'" + peek().text + "' without its opening tag");
    return body;
  }

 private:
  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  const Token& take() {
    const Token& t = peek();
    if (at_ < tokens_.size() - 1) ++at_;
    return t;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw TemplateError("line " + std::to_string(peek().line) + ": " + problem);
  }
  bool is_op(const char* op, std::size_t ahead = 0) const {
    return peek(ahead).kind == K::op && peek(ahead).text == op;
  }
  bool is_name(const char* name, std::size_t ahead = 0) const {
    return peek(ahead).kind == K::name && peek(ahead).text == name;
  }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(std::string("expected '") + op + "'");
    take();
  }
  void expect_name(const char* name) {
    if (!is_name(name)) fail(std::string("expected '") + name + "'");
    take();
  }
  // `e` with its depth set from its children's; a TemplateError past kMaxExprDepth.
  ExprPtr seal(ExprPtr e) const {
    for (const ExprPtr& item : e->items) {
      if (item) e->depth = std::max(e->depth, item->depth + 1);
    }
    for (const auto& [name, item] : e->named) e->depth = std::max(e->depth, item->depth + 1);
    if (e->depth > kMaxExprDepth) fail("an expression nests too deep");
    return e;
  }

  std::string take_name() {
    if (peek().kind != K::name) fail("expected a name");
    return take().text;
  }
  void expect(K kind, const char* what) {
    if (peek().kind != kind) fail(std::string("expected ") + what);
    take();
  }

  // Statements up to a block tag named in `stops`, which is left for the caller (its
  // block_open taken, its name not).
  Body parse_body(std::initializer_list<const char*> stops) {
    Body body;
    for (;;) {
      const Token& t = peek();
      if (t.kind == K::end) {
        if (stops.size() > 0) fail(std::string("missing '") + *stops.begin() + "'");
        return body;
      }
      if (t.kind == K::text) {
        auto n = make_node(Node::Kind::text, t.line);
        n->text = take().text;
        body.push_back(std::move(n));
      } else if (t.kind == K::print_open) {
        take();
        auto n = make_node(Node::Kind::print, t.line);
        n->expr = parse_expr();
        expect(K::print_close, "'}}'");
        body.push_back(std::move(n));
      } else if (t.kind == K::block_open) {
        for (const char* stop : stops) {
          if (is_name(stop, 1)) {
            take();
            return body;
          }
        }
        take();
        body.push_back(parse_statement());
      } else {
        fail("unexpected '" + t.text + "'");
      }
    }
  }

  NodePtr parse_statement() {
    const int line = peek().line;
    if (++block_depth_ > kMaxBlockDepth) fail("blocks nest too deep");
    NodePtr node = parse_statement_body(line);
    --block_depth_;
    return node;
  }

  NodePtr parse_statement_body(int line) {
    const std::string word = take_name();
    if (word == "if") return parse_if(line);
    if (word == "for") return parse_for(line);
    if (word == "set") return parse_set(line);
    if (word == "macro") return parse_macro(line);
    if (word == "break" || word == "continue") {
      expect(K::block_close, "'%}'");
      return make_node(word == "break" ? Node::Kind::break_ : Node::Kind::continue_, line);
    }
    if (word == "generation") {  // transformers' marker of the assistant's text
      expect(K::block_close, "'%}'");
      auto n = make_node(Node::Kind::block, line);
      n->body = parse_body({"endgeneration"});
      end_tag("endgeneration");
      return n;
    }
    fail("unknown tag '" + word + "'");
  }

  void end_tag(const char* name) {
    expect_name(name);
    expect(K::block_close, "'%}'");
  }

  NodePtr parse_if(int line) {
    auto n = make_node(Node::Kind::if_, line);
    ExprPtr condition = parse_expr();
    for (;;) {
      expect(K::block_close, "'%}'");
      Body body = parse_body({"elif", "else", "endif"});
      n->branches.emplace_back(std::move(condition), std::move(body));
      const std::string word = take_name();
      if (word == "elif") {
        condition = parse_expr();
        continue;
      }
      if (word == "else") {
        expect(K::block_close, "'%}'");
        n->body = parse_body({"endif"});
        end_tag("endif");
      } else {
        expect(K::block_close, "'%}'");
      }
      return n;
    }
  }

  NodePtr parse_for(int line) {
    auto n = make_node(Node::Kind::for_, line);
    n->targets.push_back(take_name());
    while (is_op(",")) {
      take();
      n->targets.push_back(take_name());
    }
    expect_name("in");
    n->expr = parse_or();
    if (is_name("if")) {
      take();
      n->condition = parse_or();
    }
    if (is_name("recursive")) fail("recursive loops are not supported");
    expect(K::block_close, "'%}'");
    n->body = parse_body({"else", "endfor"});
    if (take_name() == "else") {
      expect(K::block_close, "'%}'");
      n->else_body = parse_body({"endfor"});
      expect_name("endfor");
    }
    expect(K::block_close, "'%}'");
    return n;
  }

  NodePtr parse_set(int line) {
    auto n = make_node(Node::Kind::set, line);
    n->text = take_name();
    if (is_op(".")) {
      take();
      n->attribute = take_name();
    }
    if (peek().kind == K::block_close && n->attribute.empty()) {
      take();
      n->kind = Node::Kind::set_block;
      n->body = parse_body({"endset"});
      end_tag("endset");
      return n;
    }
    expect_op("=");
    n->expr = parse_expr();
    expect(K::block_close, "'%}'");
    return n;
  }

  NodePtr parse_macro(int line) {
    auto n = make_node(Node::Kind::macro, line);
    n->text = take_name();
    expect_op("(");
    while (!is_op(")")) {
      std::string name = take_name();
      ExprPtr fallback;
      if (is_op("=")) {
        take();
        fallback = parse_expr();
      }
      n->params.emplace_back(std::move(name), std::move(fallback));
      if (!is_op(")")) expect_op(",");
    }
    take();
    expect(K::block_close, "'%}'");
    n->body = parse_body({"endmacro"});
    end_tag("endmacro");
    return n;
  }

  // Counts the parser's own recursion (parentheses, "not not", "- -"), which can be deep
  // before any node is built.
  struct Nesting {
    explicit Nesting(Parser& p) : parser(p) {
      if (++parser.nesting_ > kMaxExprDepth) parser.fail("an expression nests too deep");
    }
    ~Nesting() { --parser.nesting_; }
    Parser& parser;
  };

  // Expressions, lowest precedence first, as Jinja's parser.
  ExprPtr parse_expr() {
    const Nesting nesting(*this);
    ExprPtr value = parse_or();
    if (!is_name("if")) return value;
    const int line = take().line;
    auto e = make_expr(Expr::Kind::cond, line);
    e->items.push_back(std::move(value));
    e->items.push_back(parse_or());
    if (is_name("else")) {
      take();
      e->items.push_back(parse_expr());
    } else {
      e->items.push_back(nullptr);
    }
    return seal(std::move(e));
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    auto e = make_expr(Expr::Kind::binary, line);
    e->name = std::move(op);
    e->items.push_back(std::move(left));
    e->items.push_back(std::move(right));
    return seal(std::move(e));
  }

  // A left-associative run: next (op next)*, for the operators (symbols or names) `ops`.
  template <typename Next>
  ExprPtr chain(Next next, std::initializer_list<const char*> ops) {
    ExprPtr left = next();
    for (;;) {
      const auto op = std::find_if(ops.begin(), ops.end(),
                                   [&](const char* o) { return is_op(o) || is_name(o); });
      if (op == ops.end()) return left;
      const int line = take().line;
      left = binary(*op, std::move(left), next(), line);
    }
  }

  ExprPtr parse_or() { return chain([this] { return parse_and(); }, {"or"}); }
  ExprPtr parse_and() { return chain([this] { return parse_not(); }, {"and"}); }

  ExprPtr parse_not() {
    if (!is_name("not")) return parse_compare();
    const Nesting nesting(*this);
    auto e = make_expr(Expr::Kind::unary, take().line);
    e->name = "not";
    e->items.push_back(parse_not());
    return seal(std::move(e));
  }

  ExprPtr parse_compare() {
    ExprPtr left = parse_math1();
    for (;;) {
      const int line = peek().line;
      std::string op;
      if (peek().kind == K::op &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" || peek().text == ">" ||
           peek().text == "<=" || peek().text == ">=")) {
        op = take().text;
      } else if (is_name("in")) {
        take();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        take();
        take();
        op = "not in";
      } else {
        return left;
      }
      left = binary(op, std::move(left), parse_math1(), line);
    }
  }

  ExprPtr parse_math1() { return chain([this] { return parse_concat(); }, {"+", "-"}); }
  ExprPtr parse_concat() { return chain([this] { return parse_math2(); }, {"~"}); }
  ExprPtr parse_math2() {
    return chain([this] { return parse_pow(); }, {"*", "/", "//", "%"});
  }
  ExprPtr parse_pow() { return chain([this] { return parse_unary(); }, {"**"}); }

  // As Jinja: "-3 | abs" is (-3) | abs, the filters after the operand's sign.
  ExprPtr parse_unary(bool with_filters = true) {
    ExprPtr operand;
    if (is_op("-") || is_op("+")) {
      const Nesting nesting(*this);
      const Token& t = take();
      auto e = make_expr(Expr::Kind::unary, t.line);
      e->name = t.text;
      e->items.push_back(parse_unary(false));
      operand = seal(std::move(e));
    } else {
      operand = parse_postfix(parse_primary());
    }
    if (!with_filters) return operand;
    return parse_filters(std::move(operand));
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    if (t.kind == K::name) {
      take();
      auto e = make_expr(Expr::Kind::literal, t.line);
      if (t.text == "true" || t.text == "True") {
        e->literal = Value::from(true);
      } else if (t.text == "false" || t.text == "False") {
        e->literal = Value::from(false);
      } else if (t.text == "none" || t.text == "None") {
        e->literal = Value::none();
      } else {
        e->kind = Expr::Kind::name;
        e->name = t.text;
      }
      return e;
    }
    if (t.kind == K::string) {
      auto e = make_expr(Expr::Kind::literal, t.line);
      std::string text;
      while (peek().kind == K::string) text += take().text;  // "a" "b" is "ab"
      e->literal = Value::from(std::move(text));
      return e;
    }
    if (t.kind == K::integer || t.kind == K::real) {
      take();
      auto e = make_expr(Expr::Kind::literal, t.line);
      try {
        e->literal = t.kind == K::integer ? Value::from(std::int64_t{std::stoll(t.text)})
                                          : Value::from(std::stod(t.text));
      } catch (const std::exception&) {
        fail("the number " + t.text + " is out of range");
      }
      return e;
    }
    if (is_op("(")) return parse_parenthesized();
    if (is_op("[")) {
      auto e = make_expr(Expr::Kind::list, take().line);
      while (!is_op("]")) {
        e->items.push_back(parse_expr());
        if (!is_op("]")) expect_op(",");
      }
      take();
      return seal(std::move(e));
    }
    if (is_op("{")) {
      auto e = make_expr(Expr::Kind::dict, take().line);
      while (!is_op("}")) {
        e->items.push_back(parse_expr());
        expect_op(":");
        e->items.push_back(parse_expr());
        if (!is_op("}")) expect_op(",");
      }
      take();
      return seal(std::move(e));
    }
    fail(t.kind == K::end ? "the template ends inside an expression"
                          : "unexpected '" + t.text + "' in an expression");
  }

  // (x), or a tuple (x, y) taken as a list.
  ExprPtr parse_parenthesized() {
    const int line = take().line;
    if (is_op(")")) {
      take();
      return make_expr(Expr::Kind::list, line);
    }
    ExprPtr first = parse_expr();
    if (!is_op(",")) {
      expect_op(")");
      return first;
    }
    auto e = make_expr(Expr::Kind::list, line);
    e->items.push_back(std::move(first));
    while (is_op(",")) {
      take();
      if (is_op(")")) break;
      e->items.push_back(parse_expr());
    }
    expect_op(")");
    return seal(std::move(e));
  }

  ExprPtr parse_postfix(ExprPtr target) {
    for (;;) {
      const int line = peek().line;
      if (is_op(".")) {
        take();
        auto e = make_expr(Expr::Kind::attr, line);
        e->name = take_name();
        e->items.push_back(std::move(target));
        target = seal(std::move(e));
      } else if (is_op("[")) {
        take();
        target = parse_subscript(std::move(target), line);
      } else if (is_op("(")) {
        auto e = make_expr(Expr::Kind::call, line);
        e->items.push_back(std::move(target));
        parse_arguments(*e);
        target = seal(std::move(e));
      } else {
        return target;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr target, int line) {
    ExprPtr parts[3];
    int part = 0;
    bool slice = false;
    while (!is_op("]")) {
      if (is_op(":")) {
        take();
        slice = true;
        if (++part > 2) fail("a slice has at most three parts");
        continue;
      }
      parts[part] = parse_expr();
    }
    take();
    auto e = make_expr(slice ? Expr::Kind::slice : Expr::Kind::index, line);
    e->items.push_back(std::move(target));
    if (!slice && !parts[0]) fail("an empty subscript");
    for (int i = 0; i < (slice ? 3 : 1); ++i) e->items.push_back(std::move(parts[i]));
    return seal(std::move(e));
  }

  // "(a, b, name=c)" into `e`'s items (after what is there) and named.
  void parse_arguments(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().kind == K::name && is_op("=", 1)) {
        std::string name = take().text;
        take();
        e.named.emplace_back(std::move(name), parse_expr());
      } else {
        e.items.push_back(parse_expr());
      }
      if (!is_op(")")) expect_op(",");
    }
    take();
  }

  ExprPtr parse_filters(ExprPtr target) {
    for (;;) {
      const int line = peek().line;
      if (is_op("|")) {
        take();
        auto e = make_expr(Expr::Kind::filter, line);
        e->name = take_name();
        e->items.push_back(std::move(target));
        if (is_op("(")) parse_arguments(*e);
        target = parse_postfix(seal(std::move(e)));
      } else if (is_name("is")) {
        take();
        auto e = make_expr(Expr::Kind::test, line);
        if (is_name("not")) {
          take();
          e->negated = true;
        }
        e->name = take_name();
        e->items.push_back(std::move(target));
        if (is_op("(")) {
          parse_arguments(*e);
        } else if (peek().kind == K::string || peek().kind == K::integer ||
                   peek().kind == K::real || (peek().kind == K::name && !is_keyword(peek().text))) {
          e->items.push_back(parse_primary());  // "is divisibleby 3", "is sameas false"
        }
        target = seal(std::move(e));
      } else {
        return target;
      }
    }
  }

  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  int block_depth_ = 0;
  int nesting_ = 0;
};

}  // namespace

Body parse(std::string_view source) { return Parser(lex(source)).run(); }

}  // namespace baton::jinja
