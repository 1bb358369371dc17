// What the Jinja builtins (filters, tests, methods, globals) share: argument checks, the
// items a filter walks, attribute paths, and the string methods that filters reuse.
// Internal to model/template/; the builtins' API is jinja_builtins.h.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/model/template/jinja_value.h"

namespace baton::jinja::builtin {

using Kind = Value::Kind;

[[noreturn]] void fail(const std::string& problem);
// The UTF-8 characters of `text`, each as its bytes (an invalid byte on its own).
std::vector<std::string> characters(const std::string& text);
// Python's str.isspace() for one character.
bool is_python_space(const std::string& c);
std::string as_string(const Value& v, const char* what);
std::int64_t as_int(const Value& v, const char* what);
// The items a filter walks: a list's, a dict's keys, a string's characters.
List iterate(const Value& v, const char* what);
// The attribute `path` ("a.b") of `v`: dict keys, then list indices.
Value attribute_of(const Value& v, const std::string& path);
// `args` without its first `by` positional arguments.
CallArgs shifted(const CallArgs& args, std::size_t by);
// Each byte of `s` through `f` (ASCII case).
std::string case_map(std::string s, int (*f)(int));
// Python's str methods: `name` of `s` (jinja_methods.cpp).
Value string_method(const std::string& s, const std::string& name, const CallArgs& args);
// Python's str.split(sep=None, maxsplit=-1).
Value split_method(const std::string& s, const CallArgs& args);

}  // namespace baton::jinja::builtin
