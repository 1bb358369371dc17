// jinja::Value: the values a chat template computes with, shaped as Python's (Jinja runs
// on Python): undefined, none, booleans, 64-bit integers, floats, strings, lists and
// dicts (shared, insertion-ordered, keys of any scalar type, as Python's), callables (macros and globals) and
// namespaces. str() and repr() print as Python does, to_json as Python's json.dumps.
// Thread-safety: a Value is not safe to share between threads; each render makes its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace baton::jinja {

// A template that cannot be parsed or rendered (also raise_exception's message).
class TemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a template's raise_exception() throws: the template refusing the variables it was
// given (a conversation it does not support), not a defect of the template.
class TemplateRaised : public TemplateError {
 public:
  using TemplateError::TemplateError;
};

// The largest string a render builds (its output, or any value on the way): a filter
// checks the size it is about to allocate against it first.
inline constexpr std::size_t kMaxValueBytes = 64 << 20;
// TemplateError when a value of `bytes` would pass kMaxValueBytes.
inline void check_value_size(std::size_t bytes) {
  if (bytes > kMaxValueBytes) throw TemplateError("a value grows past the output limit");
}

struct Value;
using List = std::vector<Value>;
// Keys keep their type, as a Python dict's (0 and "0" are two keys): strings, integers,
// floats, booleans, none.
using Dict = std::vector<std::pair<Value, Value>>;

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;
  // Argument `index` or `name`, whichever was given, or nullopt.
  std::optional<Value> get(std::size_t index, const std::string& name) const;
};
using Function = std::function<Value(const CallArgs&)>;

struct Value {
  enum class Kind { undefined, none, boolean, integer, real, string, list, dict, function };

  Kind kind = Kind::undefined;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string string;
  // A string marked safe (Python's Markup, from the safe and escape filters): adding a
  // plain string to it escapes that string's HTML characters, as Markup.__add__ does.
  bool markup = false;
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;  // also a namespace's attributes
  std::shared_ptr<Function> function;
  bool is_namespace = false;
  std::string undefined_name;  // what was looked up, for the error of using it

  static Value none() { return make(Kind::none); }
  static Value undefined(std::string name) {
    Value v;
    v.undefined_name = std::move(name);
    return v;
  }
  static Value from(bool b);
  static Value from(std::int64_t i);
  static Value from(double d);
  static Value from(std::string s);
  static Value from(const char* s) { return from(std::string(s)); }
  static Value from(List items);
  static Value from(Dict items);
  static Value from(Function fn);
  static Value from_json(const nlohmann::json& json);          // its objects' keys sorted
  static Value from_json(const nlohmann::ordered_json& json);  // in the text's order

  bool is(Kind k) const { return kind == k; }
  bool is_number() const { return kind == Kind::integer || kind == Kind::real; }
  double number() const { return kind == Kind::integer ? static_cast<double>(integer) : real; }
  bool truthy() const;
  // The value of the string key `key` in a dict, or nullptr.
  const Value* find(const std::string& key) const;
  // The value of `key` (any type, equal as Python's dict keys: 1, 1.0 and True are one
  // key) in a dict, or nullptr.
  const Value* find_key(const Value& key) const;

  std::string str() const;   // Python's str()
  std::string repr() const;  // Python's repr()
  // Python's json.dumps(value, ensure_ascii=False, indent=indent), as transformers' tojson.
  std::string to_json(std::optional<int> indent = std::nullopt) const;
  const char* type_name() const;

 private:
  static Value make(Kind k) {
    Value v;
    v.kind = k;
    return v;
  }
};

bool equal(const Value& a, const Value& b);
// -1, 0, 1; TemplateError for values Python cannot order.
int compare(const Value& a, const Value& b);

}  // namespace baton::jinja
