// The filters, tests, methods and global functions chat templates call, with Python's
// semantics where Jinja hands over to Python (str.strip, str.split, dict.get, ...):
// filters trim, tojson, length/count, items, list, first, last, join, upper, lower,
// capitalize, title, replace, string, int, float, default/d, select/reject,
// selectattr/rejectattr, map, unique, reverse, sort, dictsort, abs, round, sum, min, max,
// indent, safe, escape/e, wordcount, attr; the usual tests; the string and dict methods;
// and range, namespace, dict, raise_exception and strftime_now (transformers' globals).
// An unknown name is a TemplateError naming it.
// Thread-safety: pure functions (strftime_now reads the clock).
#pragma once

#include <string>

#include "baton/model/template/jinja_value.h"

namespace baton::jinja {

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args);
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);
Value call_method(const Value& target, const std::string& name, const CallArgs& args);
// The global functions, by name.
Dict make_globals();

// markupsafe's escape: & < > ' " as HTML entities.
std::string escape_html(const std::string& text);

// Python's str.strip/lstrip/rstrip: whitespace (Unicode's too) or the characters of `chars`.
std::string python_strip(const std::string& text, bool left, bool right,
                         const std::string* chars = nullptr);

}  // namespace baton::jinja
