#include "baton/model/template/jinja_builtins.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "baton/model/template/jinja_arithmetic.h"

namespace baton::jinja {
namespace {

using Kind = Value::Kind;

[[noreturn]] void fail(const std::string& problem) { throw TemplateError(problem); }

// The UTF-8 characters of `text`, each as its bytes (an invalid byte on its own).
std::vector<std::string> characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t n = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (i + n > text.size()) n = 1;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// Python's str.isspace() for one character.
bool is_python_space(const std::string& c) {
  static const char* const kSpaces[] = {" ",      "\t",     "\n",     "\v",     "\f",     "\r",
                                        "\x1c",   "\x1d",   "\x1e",   "\x1f",   "\u0085", "\u00a0",
                                        "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004",
                                        "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a",
                                        "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"};
  return std::find(std::begin(kSpaces), std::end(kSpaces), c) != std::end(kSpaces);
}

std::string as_string(const Value& v, const char* what) {
  if (!v.is(Kind::string)) fail(std::string(what) + " needs a string, not a " + v.type_name());
  return v.string;
}

std::int64_t as_int(const Value& v, const char* what) {
  if (v.is(Kind::integer)) return v.integer;
  if (v.is(Kind::boolean)) return v.boolean;
  fail(std::string(what) + " needs an integer, not a " + v.type_name());
}

// The items a filter walks: a list's, a dict's keys, a string's characters.
List iterate(const Value& v, const char* what) {
  if (v.is(Kind::list)) return *v.list;
  if (v.is(Kind::undefined)) return {};
  if (v.is(Kind::dict)) {
    List keys;
    for (const auto& [key, value] : *v.dict) keys.push_back(key);
    return keys;
  }
  if (v.is(Kind::string)) {
    List chars;
    for (std::string& c : characters(v.string)) chars.push_back(Value::from(std::move(c)));
    return chars;
  }
  fail(std::string(what) + ": a " + v.type_name() + " is not iterable");
}

// The attribute `path` ("a.b") of `v`: dict keys, then list indices.
Value attribute_of(const Value& v, const std::string& path) {
  Value current = v;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot - start);
    // As Jinja's make_attrgetter: a part of digits is looked up as an integer.
    const bool digits = !part.empty() && part.size() < 19 &&
                        std::all_of(part.begin(), part.end(), ::isdigit);
    const std::int64_t number = digits ? std::stoll(part) : 0;
    const Value* found = digits ? current.find_key(Value::from(number)) : nullptr;
    if (found == nullptr) found = current.find(part);
    if (found != nullptr) {
      current = *found;
    } else if (current.is(Kind::list) && digits &&
               static_cast<std::uint64_t>(number) < current.list->size()) {
      current = (*current.list)[static_cast<std::size_t>(number)];
    } else {
      return Value::undefined(part);
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return current;
}

CallArgs shifted(const CallArgs& args, std::size_t by) {
  CallArgs rest;
  rest.named = args.named;
  for (std::size_t i = by; i < args.positional.size(); ++i)
    rest.positional.push_back(args.positional[i]);
  return rest;
}

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
  const std::string pad = width.is(Kind::string)
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

std::string case_map(std::string s, int (*f)(int)) {
  for (char& c : s) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return s;
}

std::string title_case(std::string s) {
  bool start = true;
  for (char& c : s) {
    const bool alpha = std::isalpha(static_cast<unsigned char>(c)) != 0;
    c = static_cast<char>(start ? std::toupper(static_cast<unsigned char>(c))
                                : std::tolower(static_cast<unsigned char>(c)));
    start = !alpha;
  }
  return s;
}

std::string replace_text(const std::string& s, const std::string& from, const std::string& to,
                         std::int64_t count) {
  if (from.empty()) return s;
  std::string out;
  std::size_t at = 0;
  for (std::size_t found; count != 0 && (found = s.find(from, at)) != std::string::npos; --count) {
    check_value_size(out.size() + (found - at) + to.size());
    out.append(s, at, found - at).append(to);
    at = found + from.size();
  }
  return out.append(s, at);
}

std::string escape_html(const std::string& s) {
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

Value split_method(const std::string& s, const CallArgs& args) {
  const std::optional<Value> sep = args.get(0, "sep");
  std::int64_t max_split =
      as_int(args.get(1, "maxsplit").value_or(Value::from(std::int64_t{-1})), "split");
  List out;
  if (!sep || sep->is(Kind::none)) {  // runs of whitespace, none at the ends
    std::string word;
    bool in_word = false;
    const std::vector<std::string> chars = characters(s);
    for (std::size_t i = 0; i < chars.size(); ++i) {
      if (is_python_space(chars[i]) && !(max_split == 0 && in_word)) {
        if (in_word) {
          out.push_back(Value::from(word));
          word.clear();
          in_word = false;
          if (max_split > 0) --max_split;
        }
        continue;
      }
      if (max_split == 0 && !in_word && !out.empty()) {  // the rest, stripped on the right
        std::string rest;
        for (std::size_t j = i; j < chars.size(); ++j) rest += chars[j];
        out.push_back(Value::from(python_strip(rest, false, true)));
        return Value::from(std::move(out));
      }
      word += chars[i];
      in_word = true;
    }
    if (in_word) out.push_back(Value::from(word));
    return Value::from(std::move(out));
  }
  const std::string separator = as_string(*sep, "split");
  if (separator.empty()) fail("split: empty separator");
  std::size_t at = 0;
  for (std::size_t found; max_split != 0 && (found = s.find(separator, at)) != std::string::npos;
       --max_split) {
    out.push_back(Value::from(s.substr(at, found - at)));
    at = found + separator.size();
  }
  out.push_back(Value::from(s.substr(at)));
  return Value::from(std::move(out));
}

bool affix_test(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    const std::string x = as_string(a, prefix ? "startswith" : "endswith");
    return x.size() <= s.size() && s.compare(prefix ? 0 : s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is(Kind::list)) return std::any_of(affix.list->begin(), affix.list->end(), one);
  return one(affix);
}

Value string_method(const std::string& s, const std::string& name, const CallArgs& args) {
  auto arg = [&](std::size_t i, const char* key) {
    const std::optional<Value> v = args.get(i, key);
    if (!v) fail(name + "() needs its argument '" + key + "'");
    return *v;
  };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const std::optional<Value> chars = args.get(0, "chars");
    const std::string* set = chars && chars->is(Kind::string) ? &chars->string : nullptr;
    return Value::from(python_strip(s, name != "rstrip", name != "lstrip", set));
  }
  if (name == "split") return split_method(s, args);
  if (name == "startswith") return Value::from(affix_test(s, arg(0, "prefix"), true));
  if (name == "endswith") return Value::from(affix_test(s, arg(0, "suffix"), false));
  if (name == "upper") return Value::from(case_map(s, ::toupper));
  if (name == "lower") return Value::from(case_map(s, ::tolower));
  if (name == "title") return Value::from(title_case(s));
  if (name == "capitalize") {
    std::string out = case_map(s, ::tolower);
    if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return Value::from(out);
  }
  if (name == "replace") {
    return Value::from(replace_text(
        s, as_string(arg(0, "old"), "replace"), as_string(arg(1, "new"), "replace"),
        as_int(args.get(2, "count").value_or(Value::from(std::int64_t{-1})), "replace")));
  }
  if (name == "find" || name == "rfind") {
    const std::string x = as_string(arg(0, "sub"), name.c_str());
    const std::size_t at = name == "find" ? s.find(x) : s.rfind(x);
    return Value::from(at == std::string::npos ? std::int64_t{-1} : static_cast<std::int64_t>(at));
  }
  if (name == "count") {
    const std::string x = as_string(arg(0, "sub"), "count");
    std::int64_t n = 0;
    for (std::size_t at = s.find(x); !x.empty() && at != std::string::npos;
         at = s.find(x, at + x.size()))
      ++n;
    return Value::from(n);
  }
  if (name == "join") {
    std::string out;
    const List items = iterate(arg(0, "iterable"), "join");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string item = items[i].str();
      check_value_size(out.size() + s.size() + item.size());
      out += (i > 0 ? s : "") + item;
    }
    return Value::from(out);
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha") {
    const auto chars = characters(s);
    bool all = !chars.empty();
    for (const std::string& c : chars) {
      const auto b = static_cast<unsigned char>(c[0]);
      all = all && (name == "isdigit"   ? c.size() == 1 && std::isdigit(b)
                    : name == "isspace" ? is_python_space(c)
                                        : c.size() > 1 || std::isalpha(b));
    }
    return Value::from(all);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const std::string x = as_string(arg(0, "affix"), name.c_str());
    const bool prefix = name == "removeprefix";
    if (!affix_test(s, Value::from(x), prefix)) return Value::from(s);
    return Value::from(prefix ? s.substr(x.size()) : s.substr(0, s.size() - x.size()));
  }
  fail("a string has no method '" + name + "'");
}

}  // namespace

std::string python_strip(const std::string& text, bool left, bool right, const std::string* chars) {
  const std::vector<std::string> all = characters(text);
  const std::vector<std::string> set = chars ? characters(*chars) : std::vector<std::string>{};
  auto strippable = [&](const std::string& c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_python_space(c);
  };
  std::size_t begin = 0, end = all.size();
  while (left && begin < end && strippable(all[begin])) ++begin;
  while (right && end > begin && strippable(all[end - 1])) --end;
  std::string out;
  for (std::size_t i = begin; i < end; ++i) out += all[i];
  return out;
}

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args) {
  auto arg = [&](std::size_t i, const char* key, Value fallback) {
    return args.get(i, key).value_or(std::move(fallback));
  };
  if (name == "default" || name == "d") {
    const bool boolean = arg(1, "boolean", Value::from(false)).truthy();
    if (value.is(Kind::undefined) || (boolean && !value.truthy())) {
      return arg(0, "default_value", Value::from(""));
    }
    return value;
  }
  // select/reject/map treat undefined as Jinja does any falsy value: as empty.
  const bool empty_when_falsy = name == "select" || name == "reject" || name == "selectattr" ||
                                name == "rejectattr" || name == "map";
  if (value.is(Kind::undefined) && name != "length" && name != "count" && name != "list" &&
      !empty_when_falsy) {
    fail("'" + value.undefined_name + "' is undefined (filter " + name + ")");
  }
  if (name == "trim") {
    const Value chars = arg(0, "chars", Value::none());
    return Value::from(
        python_strip(value.str(), true, true, chars.is(Kind::string) ? &chars.string : nullptr));
  }
  if (name == "tojson") {
    const Value indent = arg(0, "indent", Value::none());
    if (indent.is(Kind::none)) return Value::from(value.to_json());
    const std::int64_t width = as_int(indent, "tojson");
    check_value_size(static_cast<std::size_t>(std::max<std::int64_t>(width, 0)));
    return Value::from(value.to_json(static_cast<int>(std::max<std::int64_t>(width, -1))));
  }
  if (name == "length" || name == "count") {
    if (value.is(Kind::string))
      return Value::from(static_cast<std::int64_t>(characters(value.string).size()));
    if (value.is(Kind::dict)) return Value::from(static_cast<std::int64_t>(value.dict->size()));
    return Value::from(static_cast<std::int64_t>(iterate(value, "length").size()));
  }
  if (name == "items") {
    if (!value.is(Kind::dict)) fail("items needs a dict, not a " + std::string(value.type_name()));
    List out;
    for (const auto& [key, v] : *value.dict) out.push_back(Value::from(List{key, v}));
    return Value::from(std::move(out));
  }
  if (name == "list") return Value::from(iterate(value, "list"));
  if (name == "first" || name == "last") {
    const List items = iterate(value, name.c_str());
    if (items.empty()) return Value::undefined(name + " of an empty sequence");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "join") {
    const std::string separator = arg(0, "d", Value::from("")).str();
    const std::optional<Value> attribute = args.get(1, "attribute");
    std::string out;
    const List items = iterate(value, "join");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string item =
          (attribute ? attribute_of(items[i], attribute->str()) : items[i]).str();
      check_value_size(out.size() + separator.size() + item.size());
      out += (i > 0 ? separator : "") + item;
    }
    return Value::from(out);
  }
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    return string_method(value.str(), name, {});
  }
  if (name == "replace") {
    return string_method(value.str(), "replace", args);
  }
  if (name == "string") return Value::from(value.str());
  if (name == "int" || name == "float") return to_number(value, name == "int", args);
  if (name == "select" || name == "reject") return select(value, args, name == "select", false);
  if (name == "selectattr" || name == "rejectattr") {
    return select(value, args, name == "selectattr", true);
  }
  if (name == "map") return map_filter(value, args);
  if (name == "unique") {
    List out;
    for (const Value& v : iterate(value, "unique")) {
      if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equal(o, v); })) {
        out.push_back(v);
      }
    }
    return Value::from(std::move(out));
  }
  if (name == "reverse") {
    if (value.is(Kind::string)) {
      std::vector<std::string> chars = characters(value.string);
      std::string out;
      for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
      return Value::from(out);
    }
    List items = iterate(value, "reverse");
    std::reverse(items.begin(), items.end());
    return Value::from(std::move(items));
  }
  if (name == "sort") return sort_filter(value, args);
  if (name == "dictsort") return dictsort(value, args);
  if (name == "abs") {
    if (value.is(Kind::integer)) return value.integer < 0 ? negate(value) : value;
    if (value.is(Kind::real)) return Value::from(std::fabs(value.real));
    fail("abs needs a number");
  }
  if (name == "round") return round_filter(value, args);
  if (name == "sum") return sum_filter(value, args);
  if (name == "min" || name == "max") return min_max(value, name == "max");
  if (name == "indent") return Value::from(indent_filter(value.str(), args));
  if (name == "safe") return value;
  if (name == "escape" || name == "e") return Value::from(escape_html(value.str()));
  if (name == "wordcount") {
    return Value::from(static_cast<std::int64_t>(split_method(value.str(), {}).list->size()));
  }
  if (name == "attr") return attribute_of(value, arg(0, "name", Value::from("")).str());
  fail("unknown filter '" + name + "'");
}

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
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

Value call_method(const Value& target, const std::string& name, const CallArgs& args) {
  if (target.is(Kind::string)) return string_method(target.string, name, args);
  if (target.is(Kind::dict) && !target.is_namespace) {
    if (name == "items") return apply_filter("items", target, {});
    if (name == "keys") return Value::from(iterate(target, "keys"));
    if (name == "values") {
      List out;
      for (const auto& [key, v] : *target.dict) out.push_back(v);
      return Value::from(std::move(out));
    }
    if (name == "get") {
      const std::optional<Value> key = args.get(0, "key");
      if (!key) fail("get() needs a key");
      const Value* found = target.find_key(*key);
      return found ? *found : args.get(1, "default").value_or(Value::none());
    }
  }
  if (target.is(Kind::undefined)) fail("'" + target.undefined_name + "' is undefined");
  fail(std::string("a ") + target.type_name() + " has no method '" + name + "'");
}

Dict make_globals() {
  Dict globals;
  globals.emplace_back(Value::from("range"), Value::from(Function([](const CallArgs& args) {
                         std::int64_t start = 0, stop = 0, step = 1;
                         const auto& p = args.positional;
                         if (p.size() == 1) {
                           stop = as_int(p[0], "range");
                         } else if (p.size() >= 2) {
                           start = as_int(p[0], "range");
                           stop = as_int(p[1], "range");
                           if (p.size() > 2) step = as_int(p[2], "range");
                         }
                         if (step == 0) fail("range() step must not be zero");
                         List out;
                         for (std::int64_t i = start; step > 0 ? i < stop : i > stop;) {
                           if (out.size() >= 100'000) fail("range() of more than 100,000 items");
                           out.push_back(Value::from(i));
                           if (__builtin_add_overflow(i, step, &i)) break;  // past stop
                         }
                         return Value::from(std::move(out));
                       })));
  globals.emplace_back(Value::from("namespace"), Value::from(Function([](const CallArgs& args) {
                         Dict attributes;
                         if (!args.positional.empty() && args.positional[0].is(Kind::dict)) {
                           attributes = *args.positional[0].dict;
                         }
                         for (const auto& [key, v] : args.named) {
                           attributes.emplace_back(Value::from(key), v);
                         }
                         Value ns = Value::from(std::move(attributes));
                         ns.is_namespace = true;
                         return ns;
                       })));
  globals.emplace_back(Value::from("dict"), Value::from(Function([](const CallArgs& args) {
                         Dict items;
                         for (const auto& [key, v] : args.named) {
                           items.emplace_back(Value::from(key), v);
                         }
                         return Value::from(std::move(items));
                       })));
  globals.emplace_back(
      Value::from("raise_exception"), Value::from(Function([](const CallArgs& args) -> Value {
        throw TemplateRaised(args.positional.empty() ? "raise_exception"
                                                      : args.positional[0].str());
      })));
  globals.emplace_back(
      Value::from("strftime_now"), Value::from(Function([](const CallArgs& args) {
        const std::time_t now =
            std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
        std::tm local{};
        localtime_r(&now, &local);
        char buffer[256];
        const std::string format = args.positional.empty() ? "" : args.positional[0].str();
        const std::size_t n = std::strftime(buffer, sizeof buffer, format.c_str(), &local);
        return Value::from(std::string(buffer, n));
      })));
  return globals;
}

}  // namespace baton::jinja
