#include "baton/model/template/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace baton::jinja {
namespace {

// Python's float repr: the shortest digits that read back the same, fixed between 1e-4
// and 1e16, else scientific; a whole number keeps ".0".
std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buffer[64];
  const double magnitude = std::fabs(d);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e16);
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, d,
                    fixed ? std::chars_format::fixed : std::chars_format::scientific);
  std::string text(buffer, result.ptr);
  if (fixed && text.find('.') == std::string::npos) text += ".0";
  return text;
}

void dump_json(const Value& v, std::optional<int> indent, int depth, std::string& out);

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

std::string string_repr(const std::string& s) {
  const bool double_quotes = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = double_quotes ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + quote;
}

// Python's json.dumps writes a key that is no string as its JSON text: 0 -> "0".
void json_key(const Value& key, std::string& out) {
  if (key.is(Value::Kind::string)) return json_string(key.string, out);
  std::string text;
  dump_json(key, std::nullopt, 0, text);
  json_string(text, out);
}

void dump_json(const Value& v, std::optional<int> indent, int depth, std::string& out) {
  const std::string item_separator = indent ? "," : ", ";
  // As Python's json.dumps: a negative indent is none (newlines only).
  const std::size_t width = indent ? static_cast<std::size_t>(std::max(*indent, 0)) : 0;
  auto newline = [&](int level) {
    if (!indent) return;
    check_value_size(out.size() + 1 + width * static_cast<std::size_t>(level));
    out += '\n';
    out.append(width * static_cast<std::size_t>(level), ' ');
  };
  check_value_size(out.size());
  switch (v.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      out += "null";
      return;
    case Value::Kind::boolean:
      out += v.boolean ? "true" : "false";
      return;
    case Value::Kind::integer:
      out += std::to_string(v.integer);
      return;
    case Value::Kind::real:
      out += std::isnan(v.real)   ? "NaN"
             : std::isinf(v.real) ? (v.real > 0 ? "Infinity" : "-Infinity")
                                  : float_repr(v.real);
      return;
    case Value::Kind::string:
      check_value_size(out.size() + v.string.size());
      json_string(v.string, out);
      return;
    case Value::Kind::list:
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < v.list->size(); ++i) {
        if (i > 0) out += item_separator;
        newline(depth + 1);
        dump_json((*v.list)[i], indent, depth + 1, out);
      }
      newline(depth);
      out += ']';
      return;
    case Value::Kind::dict:
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (std::size_t i = 0; i < v.dict->size(); ++i) {
        if (i > 0) out += item_separator;
        newline(depth + 1);
        json_key((*v.dict)[i].first, out);
        out += ": ";
        dump_json((*v.dict)[i].second, indent, depth + 1, out);
      }
      newline(depth);
      out += '}';
      return;
    case Value::Kind::function:
      throw TemplateError("a function cannot be written as JSON");
  }
}

template <typename Json>
Value convert_json(const Json& json) {
  switch (json.type()) {
    case Json::value_t::null:
      return Value::none();
    case Json::value_t::boolean:
      return Value::from(json.template get<bool>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return Value::from(json.template get<std::int64_t>());
    case Json::value_t::number_float:
      return Value::from(json.template get<double>());
    case Json::value_t::string:
      return Value::from(json.template get<std::string>());
    case Json::value_t::array: {
      List items;
      for (const auto& item : json) items.push_back(convert_json(item));
      return Value::from(std::move(items));
    }
    case Json::value_t::object: {
      Dict items;
      for (const auto& [key, item] : json.items()) {
        items.emplace_back(Value::from(key), convert_json(item));
      }
      return Value::from(std::move(items));
    }
    default:
      return Value::none();
  }
}

// repr() into `out`, bounded: a list that holds itself many times over (a = [a, a]) would
// otherwise print to a text of exponential size.
void append_repr(const Value& v, std::string& out) {
  check_value_size(out.size());
  switch (v.kind) {
    case Value::Kind::undefined:
      return;
    case Value::Kind::none:
      out += "None";
      return;
    case Value::Kind::boolean:
      out += v.boolean ? "True" : "False";
      return;
    case Value::Kind::integer:
      out += std::to_string(v.integer);
      return;
    case Value::Kind::real:
      out += float_repr(v.real);
      return;
    case Value::Kind::string:
      check_value_size(out.size() + v.string.size());
      out += string_repr(v.string);
      return;
    case Value::Kind::list:
      out += '[';
      for (std::size_t i = 0; i < v.list->size(); ++i) {
        if (i > 0) out += ", ";
        append_repr((*v.list)[i], out);
      }
      out += ']';
      return;
    case Value::Kind::dict:
      out += v.is_namespace ? "<Namespace {" : "{";
      for (std::size_t i = 0; i < v.dict->size(); ++i) {
        if (i > 0) out += ", ";
        append_repr((*v.dict)[i].first, out);
        out += ": ";
        append_repr((*v.dict)[i].second, out);
      }
      out += v.is_namespace ? "}>" : "}";
      return;
    case Value::Kind::function:
      out += "<function>";
      return;
  }
}

}  // namespace

std::optional<Value> CallArgs::get(std::size_t index, const std::string& name) const {
  for (const auto& [key, value] : named) {
    if (key == name) return value;
  }
  if (index < positional.size()) return positional[index];
  return std::nullopt;
}

Value Value::from(bool b) {
  Value v = make(Kind::boolean);
  v.boolean = b;
  return v;
}
Value Value::from(std::int64_t i) {
  Value v = make(Kind::integer);
  v.integer = i;
  return v;
}
Value Value::from(double d) {
  Value v = make(Kind::real);
  v.real = d;
  return v;
}
Value Value::from(std::string s) {
  Value v = make(Kind::string);
  v.string = std::move(s);
  return v;
}
Value Value::from(List items) {
  Value v = make(Kind::list);
  v.list = std::make_shared<List>(std::move(items));
  return v;
}
Value Value::from(Dict items) {
  Value v = make(Kind::dict);
  v.dict = std::make_shared<Dict>(std::move(items));
  return v;
}
Value Value::from(Function fn) {
  Value v = make(Kind::function);
  v.function = std::make_shared<Function>(std::move(fn));
  return v;
}

Value Value::from_json(const nlohmann::json& json) { return convert_json(json); }
Value Value::from_json(const nlohmann::ordered_json& json) { return convert_json(json); }

bool Value::truthy() const {
  switch (kind) {
    case Kind::undefined:
    case Kind::none:
      return false;
    case Kind::boolean:
      return boolean;
    case Kind::integer:
      return integer != 0;
    case Kind::real:
      return real != 0;
    case Kind::string:
      return !string.empty();
    case Kind::list:
      return !list->empty();
    case Kind::dict:
      return is_namespace || !dict->empty();
    case Kind::function:
      return true;
  }
  return false;
}

const Value* Value::find(const std::string& key) const {
  if (kind != Kind::dict) return nullptr;
  for (const auto& [k, v] : *dict) {
    if (k.kind == Kind::string && k.string == key) return &v;
  }
  return nullptr;
}

const Value* Value::find_key(const Value& key) const {
  if (kind != Kind::dict) return nullptr;
  for (const auto& [k, v] : *dict) {
    if (equal(k, key)) return &v;
  }
  return nullptr;
}

std::string Value::str() const {
  switch (kind) {
    case Kind::undefined:
      return "";
    case Kind::string:
      return string;
    default:
      return repr();
  }
}

std::string Value::repr() const {
  std::string out;
  append_repr(*this, out);
  return out;
}

std::string Value::to_json(std::optional<int> indent) const {
  std::string out;
  dump_json(*this, indent, 0, out);
  return out;
}

const char* Value::type_name() const {
  switch (kind) {
    case Kind::undefined:
      return "undefined";
    case Kind::none:
      return "none";
    case Kind::boolean:
      return "boolean";
    case Kind::integer:
      return "integer";
    case Kind::real:
      return "float";
    case Kind::string:
      return "string";
    case Kind::list:
      return "list";
    case Kind::dict:
      return is_namespace ? "namespace" : "dict";
    case Kind::function:
      return "function";
  }
  return "?";
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.number() == b.number();
  if (a.is(Value::Kind::boolean) && b.is_number()) return (a.boolean ? 1.0 : 0.0) == b.number();
  if (b.is(Value::Kind::boolean) && a.is_number()) return equal(b, a);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none:
      return true;
    case Value::Kind::boolean:
      return a.boolean == b.boolean;
    case Value::Kind::string:
      return a.string == b.string;
    case Value::Kind::list:
      if (a.list->size() != b.list->size()) return false;
      for (std::size_t i = 0; i < a.list->size(); ++i) {
        if (!equal((*a.list)[i], (*b.list)[i])) return false;
      }
      return true;
    case Value::Kind::dict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [key, value] : *a.dict) {
        const Value* other = b.find_key(key);
        if (other == nullptr || !equal(value, *other)) return false;
      }
      return true;
    default:
      return a.function == b.function;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    return a.number() < b.number() ? -1 : a.number() > b.number() ? 1 : 0;
  }
  if (a.is(Value::Kind::string) && b.is(Value::Kind::string)) {
    const int c = a.string.compare(b.string);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is(Value::Kind::list) && b.is(Value::Kind::list)) {
    for (std::size_t i = 0; i < a.list->size() && i < b.list->size(); ++i) {
      if (const int c = compare((*a.list)[i], (*b.list)[i]); c != 0) return c;
    }
    return a.list->size() < b.list->size() ? -1 : a.list->size() > b.list->size() ? 1 : 0;
  }
  throw TemplateError(std::string("cannot order a ") + a.type_name() + " and a " + b.type_name());
}

}  // namespace baton::jinja
