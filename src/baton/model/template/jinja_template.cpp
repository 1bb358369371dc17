#include "baton/model/template/jinja_template.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "baton/model/template/jinja_arithmetic.h"
#include "baton/model/template/jinja_builtins.h"
#include "baton/model/template/jinja_parser.h"

namespace baton::jinja {
namespace {

using Kind = Value::Kind;
using Scope = std::unordered_map<std::string, Value>;

enum class Flow { normal, break_, continue_ };

[[noreturn]] void fail_at(int line, const std::string& problem) {
  throw TemplateError("line " + std::to_string(line) + ": " + problem);
}

// d[key] = value, as Python: a key already there keeps its place.
void set_item(Dict& d, Value key, Value value) {
  for (auto& [k, v] : d) {
    if (equal(k, key)) {
      v = std::move(value);
      return;
    }
  }
  d.emplace_back(std::move(key), std::move(value));
}

// A dict key must be hashable in Python: a list, dict or namespace is not.
void check_key(const Value& key) {
  if (key.is(Kind::list) || key.is(Kind::dict) || key.is(Kind::function) ||
      key.is(Kind::undefined)) {
    throw TemplateError(std::string("a ") + key.type_name() + " cannot be a dict key");
  }
}

class Renderer {
 public:
  explicit Renderer(const Dict& variables) {
    scopes_.emplace_back();
    for (auto& [name, value] : make_globals()) scopes_[0][name.str()] = value;
    for (const auto& [name, value] : variables) scopes_[0][name.str()] = value;
  }

  std::string run(const Body& body) {
    std::string out;
    exec(body, out);
    return out;
  }

 private:
  void step(int line) {
    if (++steps_ > JinjaTemplate::kMaxSteps) fail_at(line, "the template runs too long");
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (auto found = it->find(name); found != it->end()) return found->second;
    }
    return Value::undefined(name);
  }

  Flow exec(const Body& body, std::string& out) {
    for (const NodePtr& node : body) {
      const Flow flow = exec(*node, out);
      if (flow != Flow::normal) return flow;
      if (out.size() > JinjaTemplate::kMaxOutputBytes)
        fail_at(node->line, "the output is too long");
    }
    return Flow::normal;
  }

  Flow exec(const Node& node, std::string& out) {
    step(node.line);
    switch (node.kind) {
      case Node::Kind::text:
        out += node.text;
        return Flow::normal;
      case Node::Kind::print:
        out += eval(*node.expr).str();
        return Flow::normal;
      case Node::Kind::if_:
        for (const auto& [condition, body] : node.branches) {
          if (eval(*condition).truthy()) return exec(body, out);
        }
        return exec(node.body, out);
      case Node::Kind::for_:
        return exec_for(node, out);
      case Node::Kind::set:
        assign(node, eval(*node.expr));
        return Flow::normal;
      case Node::Kind::set_block: {
        std::string text;
        exec(node.body, text);
        assign(node, Value::from(std::move(text)));
        return Flow::normal;
      }
      case Node::Kind::macro:
        scopes_.back()[node.text] = macro(node);
        return Flow::normal;
      case Node::Kind::break_:
        return Flow::break_;
      case Node::Kind::continue_:
        return Flow::continue_;
      case Node::Kind::block:
        return exec(node.body, out);
    }
    return Flow::normal;
  }

  void assign(const Node& node, Value value) {
    if (node.attribute.empty()) {
      scopes_.back()[node.text] = std::move(value);
      return;
    }
    const Value target = lookup(node.text);
    if (!target.is_namespace) fail_at(node.line, "'" + node.text + "' is not a namespace");
    // Values are shared, not collected: a namespace that held itself would never be freed.
    if (holds(value, *target.dict)) {
      fail_at(node.line, "'" + node.text + "' cannot hold itself");
    }
    set_item(*target.dict, Value::from(node.attribute), std::move(value));
  }

  // Whether `v` is or contains (through lists and dicts) the dict `target`.
  static bool holds(const Value& v, const Dict& target) {
    std::vector<const Value*> pending{&v};
    std::unordered_set<const void*> seen;
    while (!pending.empty()) {
      const Value* current = pending.back();
      pending.pop_back();
      const void* identity = current->dict ? static_cast<const void*>(current->dict.get())
                                           : static_cast<const void*>(current->list.get());
      if (identity == &target) return true;
      if (identity == nullptr || !seen.insert(identity).second) continue;
      if (current->list) {
        for (const Value& item : *current->list) pending.push_back(&item);
      } else {
        for (const auto& [key, item] : *current->dict) pending.push_back(&item);
      }
    }
    return false;
  }

  // The items a loop walks, shared with the list it walks when it is one.
  std::shared_ptr<const List> iterable(const Value& v, int line) {
    if (v.is(Kind::list)) return v.list;
    if (v.is(Kind::undefined)) return std::make_shared<const List>();
    if ((v.is(Kind::dict) && !v.is_namespace) || v.is(Kind::string)) {
      return apply_filter("list", v, {}).list;  // a dict's keys, a string's characters
    }
    fail_at(line, std::string("a ") + v.type_name() + " is not iterable");
  }

  void bind(const Node& node, const Value& item) {
    if (node.targets.size() == 1) {
      scopes_.back()[node.targets[0]] = item;
      return;
    }
    if (!item.is(Kind::list) || item.list->size() != node.targets.size()) {
      fail_at(node.line, "cannot unpack a " + std::string(item.type_name()) + " into " +
                             std::to_string(node.targets.size()) + " names");
    }
    for (std::size_t i = 0; i < node.targets.size(); ++i) {
      scopes_.back()[node.targets[i]] = (*item.list)[i];
    }
  }

  Flow exec_for(const Node& node, std::string& out) {
    std::shared_ptr<const List> walked = iterable(eval(*node.expr), node.line);
    scopes_.emplace_back();
    if (node.condition) {
      auto kept = std::make_shared<List>();
      for (const Value& item : *walked) {
        step(node.line);
        bind(node, item);
        if (eval(*node.condition).truthy()) kept->push_back(item);
      }
      walked = std::move(kept);
    }
    const List& items = *walked;
    const auto length = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < length; ++i) {
      step(node.line);  // an empty body still costs its iterations
      bind(node, items[i]);
      // A new loop object each time: one changed in place could close a reference cycle
      // (a namespace holding `loop`, whose nextitem is that namespace).
      scopes_.back()["loop"] = Value::from(Dict{
          {Value::from("index"), Value::from(i + 1)},
          {Value::from("index0"), Value::from(i)},
          {Value::from("revindex"), Value::from(length - i)},
          {Value::from("revindex0"), Value::from(length - i - 1)},
          {Value::from("first"), Value::from(i == 0)},
          {Value::from("last"), Value::from(i == length - 1)},
          {Value::from("length"), Value::from(length)},
          {Value::from("previtem"), i > 0 ? items[i - 1] : Value::undefined("loop.previtem")},
          {Value::from("nextitem"),
           i + 1 < length ? items[i + 1] : Value::undefined("loop.nextitem")},
      });
      if (exec(node.body, out) == Flow::break_) break;
    }
    if (items.empty()) exec(node.else_body, out);
    scopes_.pop_back();
    return Flow::normal;
  }

  Value macro(const Node& node) {
    return Value::from(Function([this, &node](const CallArgs& args) {
      if (++depth_ > JinjaTemplate::kMaxDepth) fail_at(node.line, "macros nest too deep");
      std::vector<Scope> saved = std::move(scopes_);
      scopes_ = {saved.front(), Scope{}};
      for (std::size_t i = 0; i < node.params.size(); ++i) {
        const auto& [name, fallback] = node.params[i];
        std::optional<Value> given = args.get(i, name);
        scopes_.back()[name] = given ? *given : fallback ? eval(*fallback) : Value::undefined(name);
      }
      std::string text;
      try {
        exec(node.body, text);
      } catch (...) {
        scopes_ = std::move(saved);
        --depth_;
        throw;
      }
      scopes_ = std::move(saved);
      --depth_;
      return Value::from(std::move(text));
    }));
  }

  CallArgs arguments(const Expr& e, std::size_t first) {
    CallArgs args;
    for (std::size_t i = first; i < e.items.size(); ++i)
      args.positional.push_back(eval(*e.items[i]));
    for (const auto& [name, value] : e.named) args.named.emplace_back(name, eval(*value));
    return args;
  }

  Value eval(const Expr& e) {
    step(e.line);
    try {
      return eval_unchecked(e);
    } catch (const TemplateError& error) {
      if (std::string_view(error.what()).starts_with("line ")) throw;
      if (dynamic_cast<const TemplateRaised*>(&error) != nullptr) {
        throw TemplateRaised("line " + std::to_string(e.line) + ": " + error.what());
      }
      fail_at(e.line, error.what());
    }
  }

  Value eval_unchecked(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::literal:
        return e.literal;
      case Expr::Kind::name:
        return lookup(e.name);
      case Expr::Kind::attr:
        return attribute(eval(*e.items[0]), e.name);
      case Expr::Kind::index:
        return index(eval(*e.items[0]), eval(*e.items[1]));
      case Expr::Kind::slice:
        return slice(e);
      case Expr::Kind::call:
        return call(e);
      case Expr::Kind::filter:
        return apply_filter(e.name, eval(*e.items[0]), arguments(e, 1));
      case Expr::Kind::test:
        return Value::from(apply_test(e.name, eval(*e.items[0]), arguments(e, 1)) != e.negated);
      case Expr::Kind::unary:
        return unary(e.name, eval(*e.items[0]));
      case Expr::Kind::binary:
        return binary(e);
      case Expr::Kind::cond:
        if (eval(*e.items[1]).truthy()) return eval(*e.items[0]);
        return e.items[2] ? eval(*e.items[2]) : Value::undefined("the else of a condition");
      case Expr::Kind::list: {
        List items;
        for (const ExprPtr& item : e.items) items.push_back(eval(*item));
        return Value::from(std::move(items));
      }
      case Expr::Kind::dict: {
        Dict items;
        for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) {
          Value key = eval(*e.items[i]);
          check_key(key);
          set_item(items, std::move(key), eval(*e.items[i + 1]));
        }
        return Value::from(std::move(items));
      }
    }
    return Value();
  }

  static Value attribute(const Value& target, const std::string& name) {
    if (target.is(Kind::undefined))
      throw TemplateError("'" + target.undefined_name + "' is undefined");
    if (const Value* found = target.find(name)) return *found;
    return Value::undefined(name);
  }

  static Value index(const Value& target, const Value& key) {
    if (target.is(Kind::undefined))
      throw TemplateError("'" + target.undefined_name + "' is undefined");
    if (target.is(Kind::dict)) {
      const Value* found = target.find_key(key);
      return found ? *found : Value::undefined(key.str());
    }
    if ((target.is(Kind::list) || target.is(Kind::string)) && key.is(Kind::integer)) {
      const List items =
          target.is(Kind::list) ? *target.list : *apply_filter("list", target, {}).list;
      const std::int64_t n = static_cast<std::int64_t>(items.size());
      const std::int64_t i = key.integer < 0 ? key.integer + n : key.integer;
      if (i < 0 || i >= n) return Value::undefined("index " + std::to_string(key.integer));
      return items[static_cast<std::size_t>(i)];
    }
    return Value::undefined(key.str());
  }

  Value slice(const Expr& e) {
    const Value target = eval(*e.items[0]);
    if (!target.is(Kind::list) && !target.is(Kind::string)) {
      throw TemplateError(std::string("cannot slice a ") + target.type_name());
    }
    const List items =
        target.is(Kind::list) ? *target.list : *apply_filter("list", target, {}).list;
    const auto n = static_cast<std::int64_t>(items.size());
    auto part = [&](int i) -> std::optional<std::int64_t> {
      if (!e.items[i]) return std::nullopt;
      const Value v = eval(*e.items[i]);
      if (v.is(Kind::none)) return std::nullopt;
      if (!v.is(Kind::integer)) throw TemplateError("slice indices must be integers");
      return v.integer;
    };
    const std::int64_t step = part(3).value_or(1);
    if (step == 0) throw TemplateError("slice step cannot be zero");
    auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
      if (!v) return fallback;
      std::int64_t x = *v < 0 ? *v + n : *v;
      return step > 0 ? std::clamp<std::int64_t>(x, 0, n) : std::clamp<std::int64_t>(x, -1, n - 1);
    };
    const std::int64_t start = clamp(part(1), step > 0 ? 0 : n - 1);
    const std::int64_t stop = clamp(part(2), step > 0 ? n : -1);
    List out;
    for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      out.push_back(items[static_cast<std::size_t>(i)]);
    }
    if (target.is(Kind::list)) return Value::from(std::move(out));
    std::string text;
    for (const Value& c : out) text += c.string;
    return Value::from(std::move(text));
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.items[0];
    if (callee.kind == Expr::Kind::attr) {
      const Value target = eval(*callee.items[0]);
      const Value* member = target.find(callee.name);
      if (member == nullptr || !member->is(Kind::function)) {
        return call_method(target, callee.name, arguments(e, 1));
      }
      return (*member->function)(arguments(e, 1));
    }
    const Value fn = eval(callee);
    if (!fn.is(Kind::function)) {
      throw TemplateError(fn.is(Kind::undefined)
                              ? "'" + fn.undefined_name + "' is undefined"
                              : std::string("a ") + fn.type_name() + " is not callable");
    }
    return (*fn.function)(arguments(e, 1));
  }

  static Value unary(const std::string& op, const Value& v) {
    if (op == "not") return Value::from(!v.truthy());
    if (!v.is_number())
      throw TemplateError("unary " + op + " needs a number, not a " + v.type_name());
    if (op == "+") return v;
    return negate(v);
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    const Value left = eval(*e.items[0]);
    if (op == "and") return left.truthy() ? eval(*e.items[1]) : left;
    if (op == "or") return left.truthy() ? left : eval(*e.items[1]);
    const Value right = eval(*e.items[1]);
    if (op == "==") return Value::from(equal(left, right));
    if (op == "!=") return Value::from(!equal(left, right));
    if (op == "in" || op == "not in") {
      // As Python's Jinja: an undefined value iterates as empty.
      if (right.is(Kind::undefined)) return Value::from(op == "not in");
      CallArgs args;
      args.positional.push_back(right);
      return Value::from(apply_test("in", left, args) == (op == "in"));
    }
    if (op == "~") return concatenate(left.str(), right.str());
    for (const Value* v : {&left, &right}) {
      if (v->is(Kind::undefined)) throw TemplateError("'" + v->undefined_name + "' is undefined");
    }
    if (op == "<") return Value::from(compare(left, right) < 0);
    if (op == ">") return Value::from(compare(left, right) > 0);
    if (op == "<=") return Value::from(compare(left, right) <= 0);
    if (op == ">=") return Value::from(compare(left, right) >= 0);
    return arithmetic(op, left, right);
  }

  // A string or list that doubles in a loop would take the machine long before the
  // step limit: values are bounded as the output is.
  static Value bounded(Value v) {
    if (v.string.size() > JinjaTemplate::kMaxOutputBytes ||
        (v.list && v.list->size() > JinjaTemplate::kMaxOutputBytes / 64)) {
      throw TemplateError("a value grows past the output limit");
    }
    return v;
  }

  static Value concatenate(const std::string& a, const std::string& b) {
    if (a.size() + b.size() > kMaxValueBytes) {
      throw TemplateError("a value grows past the output limit");
    }
    return Value::from(a + b);
  }

  static Value arithmetic(const std::string& op, const Value& a, const Value& b) {
    if (op == "+" && a.is(Kind::string) && b.is(Kind::string)) {
      if (!a.markup && !b.markup) return concatenate(a.string, b.string);
      // Markup + str escapes the str (Markup.__add__ and __radd__); the sum is Markup.
      Value sum = concatenate(a.markup ? a.string : escape_html(a.string),
                              b.markup ? b.string : escape_html(b.string));
      sum.markup = true;
      return sum;
    }
    if (op == "+" && a.is(Kind::list) && b.is(Kind::list)) {
      if (a.list->size() + b.list->size() > kMaxValueBytes / 64) {
        throw TemplateError("a value grows past the output limit");
      }
      List items = *a.list;
      items.insert(items.end(), b.list->begin(), b.list->end());
      return bounded(Value::from(std::move(items)));
    }
    if (op == "*" && a.is(Kind::string) && b.is(Kind::integer)) {
      // An empty string repeated any number of times is empty, at once: counting to 2^63
      // appending nothing hung the renderer (found by jinja_fuzz).
      if (a.string.empty() || b.integer <= 0) return Value::from("");
      if (static_cast<std::uint64_t>(b.integer) > kMaxValueBytes / a.string.size()) {
        throw TemplateError("a string repeated past the output limit");
      }
      std::string out;
      for (std::int64_t i = 0; i < b.integer; ++i) out += a.string;
      return Value::from(std::move(out));
    }
    if (!a.is_number() || !b.is_number()) {
      throw TemplateError("cannot apply '" + op + "' to a " + a.type_name() + " and a " +
                          b.type_name());
    }
    return arithmetic_op(op, a, b);
  }

  std::vector<Scope> scopes_;
  std::size_t steps_ = 0;
  int depth_ = 0;
};

}  // namespace

JinjaTemplate::JinjaTemplate(std::string_view source) : body_(parse(source)) {}

std::string JinjaTemplate::render(const Dict& variables) const {
  return Renderer(variables).run(body_);
}

}  // namespace baton::jinja
