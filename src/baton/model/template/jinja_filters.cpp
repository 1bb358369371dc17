// The filters (jinja_builtins.h), by name in one table.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "baton/model/template/jinja_arithmetic.h"
#include "baton/model/template/jinja_builtin_support.h"
#include "baton/model/template/jinja_builtins.h"

namespace baton::jinja {
namespace builtin {
namespace {

// As Jinja's select_or_reject and map, which begin `if value:`: a falsy value (none,
// undefined, an empty string) yields nothing.
Value select(const Value& value, const CallArgs& args, bool keep, bool by_attribute) {
  List out;
  if (!value.truthy()) return Value::from(std::move(out));
  const std::size_t skip = by_attribute ? 1 : 0;
  const std::string attribute =
      by_attribute ? as_string(args.get(0, "attribute").value_or(Value()), "selectattr") : "";
  const std::optional<Value> test = args.get(skip, "test");
  const CallArgs test_args = shifted(args, skip + 1);
  for (const Value& item : iterate(value, "select")) {
    const Value subject = by_attribute ? attribute_of(item, attribute) : item;
    const bool passes =
        test ? apply_test(as_string(*test, "a test name"), subject, test_args) : subject.truthy();
    if (passes == keep) out.push_back(item);
  }
  return Value::from(std::move(out));
}

Value map_filter(const Value& value, const CallArgs& args) {
  List out;
  if (!value.truthy()) return Value::from(std::move(out));
  const std::optional<Value> attribute = args.get(99, "attribute");
  for (const Value& item : iterate(value, "map")) {
    if (attribute) {
      Value v = attribute_of(item, as_string(*attribute, "map's attribute"));
      if (v.is(Kind::undefined)) v = args.get(99, "default").value_or(v);
      out.push_back(std::move(v));
    } else {
      if (args.positional.empty()) fail("map needs a filter name or attribute=");
      out.push_back(
          apply_filter(as_string(args.positional[0], "map's filter"), item, shifted(args, 1)));
    }
  }
  return Value::from(std::move(out));
}

Value sort_filter(const Value& value, const CallArgs& args) {
  List items = iterate(value, "sort");
  const bool reverse = args.get(0, "reverse").value_or(Value::from(false)).truthy();
  const std::optional<Value> attribute = args.get(2, "attribute");
  auto key = [&](const Value& v) {
    return attribute ? attribute_of(v, as_string(*attribute, "sort's attribute")) : v;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? compare(key(b), key(a)) < 0 : compare(key(a), key(b)) < 0;
  });
  return Value::from(std::move(items));
}

std::string indent_filter(const std::string& text, const CallArgs& args) {
  const Value width = args.get(0, "width").value_or(Value::from(std::int64_t{4}));
  const std::int64_t spaces = width.is(Kind::string) ? 0 : as_int(width, "indent");
  check_value_size(static_cast<std::size_t>(std::max<std::int64_t>(spaces, 0)));
  const std::string pad =
      width.is(Kind::string)
          ? width.string
          : std::string(static_cast<std::size_t>(std::max<std::int64_t>(spaces, 0)), ' ');
  const bool first = args.get(1, "first").value_or(Value::from(false)).truthy();
  const bool blank = args.get(2, "blank").value_or(Value::from(false)).truthy();
  std::string out;
  std::size_t start = 0;
  for (bool is_first = true;; is_first = false) {
    const std::size_t newline = text.find('\n', start);
    const std::string line = text.substr(start, newline - start);
    const bool padded = (!is_first || first) && (blank || !line.empty());
    check_value_size(out.size() + (padded ? pad.size() : 0) + line.size() + 1);
    if (padded) out += pad;
    out += line;
    if (newline == std::string::npos) break;
    out += '\n';
    start = newline + 1;
  }
  return out;
}

std::string escape_html_text(const std::string& s) {
  std::string out;
  for (const char c : s) {
    check_value_size(out.size() + 5);  // "&amp;" at most
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Python's float(s) for a stripped string: decimal or scientific, inf, nan; nullopt for
// anything else (strtod's hexadecimal is not Python's).
std::optional<double> python_float(const std::string& s) {
  if (s.empty() || s.find_first_of("xX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return d;
}

Value to_number(const Value& v, bool integer, const CallArgs& args) {
  const Value fallback =
      args.get(0, "default").value_or(integer ? Value::from(std::int64_t{0}) : Value::from(0.0));
  if (v.is(Kind::integer)) return integer ? v : Value::from(static_cast<double>(v.integer));
  if (v.is(Kind::real)) {
    if (!integer) return v;
    if (std::isnan(v.real)) return fallback;  // Jinja's int: ValueError, so the default
    return Value::from(to_int64(v.real, "int"));
  }
  if (v.is(Kind::boolean)) return to_number(Value::from(std::int64_t{v.boolean}), integer, args);
  if (!v.is(Kind::string)) return fallback;
  const std::string s = python_strip(v.string, true, true);
  if (integer) {
    std::int64_t i = 0;
    const char* first = s.data() + (s.starts_with('+') ? 1 : 0);
    const auto [end, error] = std::from_chars(first, s.data() + s.size(), i);
    if (error == std::errc::result_out_of_range) fail("int: " + s + " is out of 64-bit range");
    if (error == std::errc() && end == s.data() + s.size() && !s.empty()) return Value::from(i);
  }
  // As Jinja's int and float: Python's float(s), and int("42.5") is int(float("42.5")).
  const std::optional<double> d = python_float(s);
  if (!d) return fallback;
  if (!integer) return Value::from(*d);
  if (std::isnan(*d)) return fallback;
  return Value::from(to_int64(*d, "int"));
}

// Jinja's dictsort(case_sensitive=false, by="key", reverse=false): (key, value) pairs in
// Python's order of the keys (or values): integers numerically, strings without case.
Value dictsort(const Value& value, const CallArgs& args) {
  if (!value.is(Kind::dict)) fail("dictsort needs a dict");
  const bool case_sensitive = args.get(0, "case_sensitive").value_or(Value::from(false)).truthy();
  const std::string by = args.get(1, "by").value_or(Value::from("key")).str();
  if (by != "key" && by != "value") fail("dictsort: 'by' must be 'key' or 'value'");
  const bool reverse = args.get(2, "reverse").value_or(Value::from(false)).truthy();
  auto key = [&](const std::pair<Value, Value>& item) {
    const Value& v = by == "key" ? item.first : item.second;
    return v.is(Kind::string) && !case_sensitive ? Value::from(case_map(v.string, ::tolower)) : v;
  };
  Dict items = *value.dict;
  std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
    return reverse ? compare(key(b), key(a)) < 0 : compare(key(a), key(b)) < 0;
  });
  List out;
  for (auto& [k, v] : items) out.push_back(Value::from(List{k, v}));
  return Value::from(std::move(out));
}

Value min_max(const Value& value, bool max) {
  const List items = iterate(value, max ? "max" : "min");
  if (items.empty()) return Value::undefined("an empty sequence's extreme");
  Value best = items[0];
  for (const Value& v : items) {
    if (max ? compare(v, best) > 0 : compare(v, best) < 0) best = v;
  }
  return best;
}

Value sum_filter(const Value& value, const CallArgs& args) {
  const std::optional<Value> attribute = args.get(0, "attribute");
  Value total = args.get(1, "start").value_or(Value::from(std::int64_t{0}));
  for (const Value& item : iterate(value, "sum")) {
    const Value v = attribute ? attribute_of(item, as_string(*attribute, "sum")) : item;
    if (!v.is_number() || !total.is_number()) fail("sum needs numbers");
    total = total.is(Kind::integer) && v.is(Kind::integer)
                ? Value::from(checked_add(total.integer, v.integer))
                : Value::from(total.number() + v.number());
  }
  return total;
}

Value round_filter(const Value& v, const CallArgs& args) {
  if (!v.is_number()) fail("round needs a number");
  const std::int64_t precision =
      as_int(args.get(0, "precision").value_or(Value::from(std::int64_t{0})), "round");
  const std::string method = args.get(1, "method").value_or(Value::from("common")).str();
  const double scale = std::pow(10.0, static_cast<double>(precision));
  // Python's round(x, 400) is x and round(x, -400) is 0.0: digits past a double's range.
  if (std::isinf(scale)) return Value::from(v.number());
  if (scale == 0) return Value::from(0.0);
  const double x = v.number() * scale;
  const double r = method == "ceil"    ? std::ceil(x)
                   : method == "floor" ? std::floor(x)
                                       : std::round(x);
  return Value::from(r / scale);
}

Value arg(const CallArgs& args, std::size_t i, const char* key, Value fallback) {
  return args.get(i, key).value_or(std::move(fallback));
}

Value default_filter(const Value& value, const CallArgs& args, std::string_view) {
  const bool boolean = arg(args, 1, "boolean", Value::from(false)).truthy();
  if (value.is(Kind::undefined) || (boolean && !value.truthy())) {
    return arg(args, 0, "default_value", Value::from(""));
  }
  return value;
}

Value trim(const Value& value, const CallArgs& args, std::string_view) {
  const Value chars = arg(args, 0, "chars", Value::none());
  return Value::from(
      python_strip(value.str(), true, true, chars.is(Kind::string) ? &chars.string : nullptr));
}

Value tojson(const Value& value, const CallArgs& args, std::string_view) {
  const Value indent = arg(args, 0, "indent", Value::none());
  if (indent.is(Kind::none)) return Value::from(value.to_json());
  const std::int64_t width = as_int(indent, "tojson");
  check_value_size(static_cast<std::size_t>(std::max<std::int64_t>(width, 0)));
  return Value::from(value.to_json(static_cast<int>(std::max<std::int64_t>(width, -1))));
}

Value length(const Value& value, const CallArgs&, std::string_view) {
  if (value.is(Kind::string)) {
    return Value::from(static_cast<std::int64_t>(characters(value.string).size()));
  }
  if (value.is(Kind::dict)) return Value::from(static_cast<std::int64_t>(value.dict->size()));
  return Value::from(static_cast<std::int64_t>(iterate(value, "length").size()));
}

Value items(const Value& value, const CallArgs&, std::string_view) {
  if (value.is(Kind::undefined)) return Value::from(List{});
  if (!value.is(Kind::dict)) fail("items needs a dict, not a " + std::string(value.type_name()));
  List out;
  for (const auto& [key, v] : *value.dict) out.push_back(Value::from(List{key, v}));
  return Value::from(std::move(out));
}

Value first_or_last(const Value& value, const CallArgs&, std::string_view name) {
  const std::string which(name);
  const List all = iterate(value, which.c_str());
  if (all.empty()) return Value::undefined(which + " of an empty sequence");
  return name == "first" ? all.front() : all.back();
}

Value join(const Value& value, const CallArgs& args, std::string_view) {
  const std::string separator = arg(args, 0, "d", Value::from("")).str();
  const std::optional<Value> attribute = args.get(1, "attribute");
  std::string out;
  const List all = iterate(value, "join");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string item = (attribute ? attribute_of(all[i], attribute->str()) : all[i]).str();
    check_value_size(out.size() + separator.size() + item.size());
    out += (i > 0 ? separator : "") + item;
  }
  return Value::from(out);
}

Value unique(const Value& value, const CallArgs&, std::string_view) {
  List out;
  for (const Value& v : iterate(value, "unique")) {
    if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equal(o, v); })) {
      out.push_back(v);
    }
  }
  return Value::from(std::move(out));
}

Value reverse(const Value& value, const CallArgs&, std::string_view) {
  if (value.is(Kind::string)) {
    std::vector<std::string> chars = characters(value.string);
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
    return Value::from(out);
  }
  List all = iterate(value, "reverse");
  std::reverse(all.begin(), all.end());
  return Value::from(std::move(all));
}

Value abs_filter(const Value& value, const CallArgs&, std::string_view) {
  if (value.is(Kind::integer)) return value.integer < 0 ? negate(value) : value;
  if (value.is(Kind::real)) return Value::from(std::fabs(value.real));
  fail("abs needs a number");
}

// upper, lower, capitalize and title: the string method of the filter's name.
Value case_filter(const Value& v, const CallArgs&, std::string_view name) {
  return string_method(v.str(), std::string(name), {});
}

// Python's Markup: escaping a Markup string leaves it as it is.
Value escape(const Value& v, const CallArgs&, std::string_view) {
  if (v.is(Kind::string) && v.markup) return v;
  Value out = Value::from(escape_html_text(v.str()));
  out.markup = true;
  return out;
}

Value safe(const Value& v, const CallArgs&, std::string_view) {
  if (v.is(Kind::function) || v.is(Kind::list) || v.is(Kind::dict)) return v;
  Value out = Value::from(v.is(Kind::string) ? v.string : v.str());
  out.markup = true;
  return out;
}

struct Filter {
  Value (*run)(const Value& value, const CallArgs& args, std::string_view name) = nullptr;
  // Called on an undefined value too: default decides on it, select/reject/map treat it
  // as Jinja does any falsy value (empty), length, count, list and items as empty, and
  // the filters that work on its text take "", as Python's Undefined converts to.
  bool takes_undefined = false;
};

// Every filter by name; a filter that serves several names gets the name it was called by.
const std::unordered_map<std::string_view, Filter>& filters() {
  static const std::unordered_map<std::string_view, Filter> table = {
      {"default", {.run = default_filter, .takes_undefined = true}},
      {"d", {.run = default_filter, .takes_undefined = true}},
      {"trim", {.run = trim, .takes_undefined = true}},
      {"tojson", {.run = tojson}},
      {"length", {.run = length, .takes_undefined = true}},
      {"count", {.run = length, .takes_undefined = true}},
      {"items", {.run = items, .takes_undefined = true}},
      {"list",
       {.run = [](const Value& v, const CallArgs&,
                  std::string_view) { return Value::from(iterate(v, "list")); },
        .takes_undefined = true}},
      {"first", {.run = first_or_last}},
      {"last", {.run = first_or_last}},
      {"join", {.run = join}},
      {"upper", {.run = case_filter, .takes_undefined = true}},
      {"lower", {.run = case_filter, .takes_undefined = true}},
      {"capitalize", {.run = case_filter, .takes_undefined = true}},
      {"title", {.run = case_filter, .takes_undefined = true}},
      {"replace",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return string_method(v.str(), "replace", args); },
        .takes_undefined = true}},
      {"string",
       {.run = [](const Value& v, const CallArgs&,
                  std::string_view) { return Value::from(v.str()); },
        .takes_undefined = true}},
      {"int",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return to_number(v, true, args); }}},
      {"float",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return to_number(v, false, args); }}},
      {"select",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return select(v, args, true, false); },
        .takes_undefined = true}},
      {"reject",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return select(v, args, false, false); },
        .takes_undefined = true}},
      {"selectattr",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return select(v, args, true, true); },
        .takes_undefined = true}},
      {"rejectattr",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return select(v, args, false, true); },
        .takes_undefined = true}},
      {"map",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return map_filter(v, args); },
        .takes_undefined = true}},
      {"unique", {.run = unique}},
      {"reverse", {.run = reverse}},
      {"sort",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return sort_filter(v, args); }}},
      {"dictsort",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return dictsort(v, args); }}},
      {"abs", {.run = abs_filter}},
      {"round",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return round_filter(v, args); }}},
      {"sum",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return sum_filter(v, args); }}},
      {"min",
       {.run = [](const Value& v, const CallArgs&,
                  std::string_view) { return min_max(v, false); }}},
      {"max",
       {.run = [](const Value& v, const CallArgs&, std::string_view) { return min_max(v, true); }}},
      {"indent",
       {.run = [](const Value& v, const CallArgs& args,
                  std::string_view) { return Value::from(indent_filter(v.str(), args)); }}},
      {"safe", {.run = safe, .takes_undefined = true}},
      {"escape", {.run = escape, .takes_undefined = true}},
      {"e", {.run = escape, .takes_undefined = true}},
      {"wordcount",
       {.run =
            [](const Value& v, const CallArgs&, std::string_view) {
              return Value::from(static_cast<std::int64_t>(split_method(v.str(), {}).list->size()));
            }}},
      {"attr",
       {.run =
            [](const Value& v, const CallArgs& args, std::string_view) {
              return attribute_of(v, arg(args, 0, "name", Value::from("")).str());
            }}},
  };
  return table;
}

}  // namespace
}  // namespace builtin

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args) {
  using namespace builtin;
  const auto found = filters().find(name);
  if (value.is(Kind::undefined) && (found == filters().end() || !found->second.takes_undefined)) {
    fail("'" + value.undefined_name + "' is undefined (filter " + name + ")");
  }
  if (found == filters().end()) fail("unknown filter '" + name + "'");
  return found->second.run(value, args, name);
}

std::string escape_html(const std::string& text) { return builtin::escape_html_text(text); }

}  // namespace baton::jinja
