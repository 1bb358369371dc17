// Jinja's tests (`x is defined`, `x is string`, ...: jinja_builtins.h).
#include <algorithm>
#include <cctype>

#include "baton/model/template/jinja_arithmetic.h"
#include "baton/model/template/jinja_builtin_support.h"
#include "baton/model/template/jinja_builtins.h"

namespace baton::jinja {

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
  using namespace builtin;
  auto other = [&]() {
    const std::optional<Value> v = args.get(0, "other");
    if (!v) fail("the test '" + name + "' needs an argument");
    return *v;
  };
  if (name == "defined") return !value.is(Kind::undefined);
  if (name == "undefined") return value.is(Kind::undefined);
  if (name == "none") return value.is(Kind::none);
  if (name == "boolean") return value.is(Kind::boolean);
  if (name == "true") return value.is(Kind::boolean) && value.boolean;
  if (name == "false") return value.is(Kind::boolean) && !value.boolean;
  if (name == "number") return value.is_number();
  if (name == "integer") return value.is(Kind::integer);
  if (name == "float") return value.is(Kind::real);
  if (name == "string") return value.is(Kind::string);
  if (name == "mapping") return value.is(Kind::dict) && !value.is_namespace;
  if (name == "iterable")
    return value.is(Kind::list) || value.is(Kind::dict) || value.is(Kind::string);
  if (name == "sequence")
    return value.is(Kind::list) || value.is(Kind::string) || value.is(Kind::dict);
  if (name == "callable") return value.is(Kind::function);
  if (name == "even" || name == "odd") {
    return (as_int(value, name.c_str()) % 2 == 0) == (name == "even");
  }
  if (name == "divisibleby") {
    const std::int64_t by = as_int(other(), "divisibleby");
    return by != 0 && as_int(value, "divisibleby") % by == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==" || name == "sameas") {
    return equal(value, other());
  }
  if (name == "ne" || name == "!=") return !equal(value, other());
  if (name == "lt" || name == "<") return compare(value, other()) < 0;
  if (name == "gt" || name == ">") return compare(value, other()) > 0;
  if (name == "le" || name == "<=") return compare(value, other()) <= 0;
  if (name == "ge" || name == ">=") return compare(value, other()) >= 0;
  if (name == "in") {
    const Value container = other();
    if (container.is(Kind::string)) return container.string.find(value.str()) != std::string::npos;
    const List items = iterate(container, "in");
    return std::any_of(items.begin(), items.end(), [&](const Value& v) { return equal(v, value); });
  }
  if (name == "lower" || name == "upper") {
    const std::string s = value.str();
    return s == case_map(s, name == "lower" ? ::tolower : ::toupper);
  }
  fail("unknown test '" + name + "'");
}

}  // namespace baton::jinja
