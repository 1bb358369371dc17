// The methods of strings and dicts (jinja_builtins.h), with Python's semantics.
#include <algorithm>
#include <cctype>

#include "baton/model/template/jinja_builtin_support.h"
#include "baton/model/template/jinja_builtins.h"

namespace baton::jinja {
namespace builtin {
namespace {

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

bool affix_test(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& a) {
    const std::string x = as_string(a, prefix ? "startswith" : "endswith");
    return x.size() <= s.size() && s.compare(prefix ? 0 : s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.is(Kind::list)) return std::any_of(affix.list->begin(), affix.list->end(), one);
  return one(affix);
}

}  // namespace

std::string case_map(std::string s, int (*f)(int)) {
  for (char& c : s) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return s;
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

}  // namespace builtin

std::string python_strip(const std::string& text, bool left, bool right, const std::string* chars) {
  using namespace builtin;
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

Value call_method(const Value& target, const std::string& name, const CallArgs& args) {
  using namespace builtin;
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

}  // namespace baton::jinja
