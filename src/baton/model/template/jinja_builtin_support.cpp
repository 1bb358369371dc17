#include "baton/model/template/jinja_builtin_support.h"

#include <algorithm>
#include <cctype>

namespace baton::jinja::builtin {

void fail(const std::string& problem) { throw TemplateError(problem); }

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
    const bool digits =
        !part.empty() && part.size() < 19 && std::all_of(part.begin(), part.end(), ::isdigit);
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

}  // namespace baton::jinja::builtin
