// Objects and arrays of the JSON Schema compiler (schema_compiler.h).
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "baton/grammar/grammar_limits.h"
#include "baton/grammar/schema_compiler.h"

namespace baton::grammar {
namespace {

struct Property {
  std::string name;
  bool required = false;
  Expr value;
};

// Bytes of a key that needs no escape, so that each key has one spelling.
ByteSet plain_key_bytes() {
  ByteSet set;
  for (unsigned b = 0x20; b < 0x7F; ++b) set.set(b);
  set.reset('"');
  set.reset('\\');
  return set;
}

// A quoted key of plain bytes that is none of `names`: a walk of the names' byte trie that
// may leave it at any byte, and may close the quote anywhere but at the end of a name.
Expr key_not_in(const std::vector<std::string>& names, std::size_t depth) {
  const ByteSet plain = plain_key_bytes();
  std::map<unsigned char, std::vector<std::string>> children;
  bool is_name = false;
  for (const std::string& n : names) {
    if (!std::all_of(n.begin(), n.end(),
                     [&](char c) { return plain.test(static_cast<unsigned char>(c)); }))
      continue;  // a name with escapes or non-ASCII bytes is never a plain key
    if (n.size() == depth)
      is_name = true;
    else
      children[static_cast<unsigned char>(n[depth])].push_back(n);
  }
  std::vector<Expr> out;
  if (!is_name) out.push_back(byte_of('"'));
  ByteSet leave = plain;
  for (auto& [b, under] : children) {
    leave.reset(b);
    out.push_back(sequence({byte_of(b), key_not_in(under, depth + 1)}));
  }
  if (leave.any()) out.push_back(sequence({bytes(leave), star(bytes(plain)), byte_of('"')}));
  return choice(std::move(out));
}

std::uint32_t count_keyword(const SchemaJson& schema, const char* key, std::uint32_t fallback,
                            const std::string& path, std::uint32_t limit) {
  const auto it = schema.find(key);
  if (it == schema.end()) return fallback;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
    throw SchemaError(key, pointer_child(path, key), "must be a non-negative integer");
  if (it->get<std::int64_t>() > static_cast<std::int64_t>(limit))
    throw SchemaError(key, pointer_child(path, key), "over the limit of " + std::to_string(limit));
  return static_cast<std::uint32_t>(it->get<std::int64_t>());
}

}  // namespace

Expr SchemaCompiler::object(const SchemaJson& schema, const std::string& path, std::size_t depth) {
  return sequence(
      {byte_of('{'), json_.ws(), object_members(schema, path, depth), json_.ws(), byte_of('}')});
}

Expr SchemaCompiler::object_members(const SchemaJson& schema, const std::string& path,
                                    std::size_t depth) {
  const SchemaJson no_properties = SchemaJson::object();
  const SchemaJson& properties =
      schema.contains("properties") ? schema["properties"] : no_properties;
  if (!properties.is_object())
    throw SchemaError("properties", pointer_child(path, "properties"), "must be an object");
  const SchemaJson no_required = SchemaJson::array();
  const SchemaJson& required = schema.contains("required") ? schema["required"] : no_required;
  if (!required.is_array())
    throw SchemaError("required", pointer_child(path, "required"), "must be an array");
  const auto is_required = [&](const std::string& name) {
    return std::find(required.begin(), required.end(), name) != required.end();
  };
  const auto additional = schema.find("additionalProperties");
  const bool others = additional != schema.end() && *additional != false;
  nodes_ += properties.size();
  if (nodes_ > kMaxSchemaNodes)
    throw SchemaError(
        "properties", pointer_child(path, "properties"),
        "more than " + std::to_string(kMaxSchemaNodes) + " subschemas and properties");
  std::vector<Property> props;
  std::vector<std::string> names;
  const std::string properties_path = pointer_child(path, "properties");
  for (const auto& [name, sub] : properties.items()) {
    props.push_back(
        Property{.name = name,
                 .required = is_required(name),
                 .value = value_rule(sub, pointer_child(properties_path, name), depth + 1)});
    names.push_back(json_quote(name).substr(1));
    names.back().pop_back();
  }
  for (const auto& name : required) {
    if (!name.is_string())
      throw SchemaError("required", pointer_child(path, "required"), "must list names");
    if (properties.contains(name.get<std::string>())) continue;
    if (additional != schema.end() && *additional == false)
      throw SchemaError(
          "required", pointer_child(path, "required"),
          "'" + name.get<std::string>() + "' is required but additionalProperties is false");
    props.push_back(
        Property{.name = name.get<std::string>(), .required = true, .value = json_.value()});
    names.push_back(json_quote(name.get<std::string>()).substr(1));
    names.back().pop_back();
  }
  const Expr sep = sequence({json_.ws(), byte_of(','), json_.ws()});
  const auto member = [&](const Property& p) {
    return json_.member(JsonGrammar::string_literal(p.name), p.value);
  };
  Expr extra = empty();  // one additional member, when allowed
  if (others) {
    const Expr value =
        additional->is_object()
            ? value_rule(*additional, pointer_child(path, "additionalProperties"), depth + 1)
            : json_.value();
    extra = json_.member(sequence({byte_of('"'), key_not_in(names, 0)}), value);
  }
  // After a member has been written: the rest of the properties from i on, then others.
  const auto rest_after = [&](std::size_t i) {
    std::vector<Expr> items;
    for (std::size_t k = i; k < props.size(); ++k) {
      Expr item = sequence({sep, member(props[k])});
      items.push_back(props[k].required ? std::move(item) : optional(std::move(item)));
    }
    if (others) items.push_back(star(sequence({sep, extra})));
    return sequence(std::move(items));
  };
  const auto item = [&](std::size_t k) {
    Expr one = sequence({sep, member(props[k])});
    return props[k].required ? one : optional(std::move(one));
  };
  const Expr only_others =
      others ? optional(sequence({extra, star(sequence({sep, extra}))})) : empty();
  if (props.empty()) return only_others;
  const auto first_required = static_cast<std::size_t>(
      std::find_if(props.begin(), props.end(), [](const Property& p) { return p.required; }) -
      props.begin());
  // The first member written is one of the leading optional properties or the first
  // required one; tails[j] is what may follow when it is props[j]. Each tail is the next
  // item and the tail after it: a chain of rules, so the size stays linear.
  const std::size_t last = std::min(first_required, props.size() - 1);
  std::vector<Expr> tails(last + 1);
  tails[last] = rest_after(last + 1);
  for (std::size_t j = last; j-- > 0;) {
    const RuleId rule = grammar_.declare(prefix_ + "members");
    grammar_.define(rule, sequence({item(j + 1), tails[j + 1]}));
    tails[j] = ref(rule);
  }
  std::vector<Expr> alternatives;
  for (std::size_t j = 0; j <= last; ++j)
    alternatives.push_back(sequence({member(props[j]), tails[j]}));
  if (first_required == props.size()) alternatives.push_back(only_others);
  return choice(std::move(alternatives));
}

Expr SchemaCompiler::array(const SchemaJson& schema, const std::string& path, std::size_t depth) {
  // prefixItems (or the older items-array) name the first positions; items (or the older
  // additionalItems) the rest: absent, any value; false, none.
  std::vector<Expr> prefix;
  const char* prefix_key = schema.contains("prefixItems") ? "prefixItems" : "items";
  const char* rest_key = schema.contains("prefixItems") ? "items"
                         : (schema.contains("items") && schema["items"].is_array())
                             ? "additionalItems"
                             : "items";
  if (schema.contains(prefix_key) && schema[prefix_key].is_array()) {
    const std::string where = pointer_child(path, prefix_key);
    for (std::size_t i = 0; i < schema[prefix_key].size(); ++i)
      prefix.push_back(
          value_rule(schema[prefix_key][i], pointer_child(where, std::to_string(i)), depth + 1));
  } else if (std::string_view(prefix_key) == "prefixItems") {
    throw SchemaError(prefix_key, pointer_child(path, prefix_key), "must be an array");
  }
  std::optional<Expr> item = json_.value();
  if (const auto it = schema.find(rest_key); it != schema.end()) {
    if (*it == false)
      item.reset();
    else if (!it->is_array())
      item = value_rule(*it, pointer_child(path, rest_key), depth + 1);
  }
  const std::uint32_t min = count_keyword(schema, "minItems", 0, path, kMaxRepeat);
  std::uint32_t max = count_keyword(schema, "maxItems", kUnbounded, path, kMaxRepeat);
  if (!item) max = std::min<std::uint32_t>(max, static_cast<std::uint32_t>(prefix.size()));
  if (min > max)
    throw SchemaError("minItems", pointer_child(path, "minItems"),
                      "no array length satisfies the schema");
  const Expr sep = sequence({json_.ws(), byte_of(','), json_.ws()});
  // The elements from position i (1-based) on; `first`: no comma before it.
  const std::function<Expr(std::uint32_t, bool)> from = [&](std::uint32_t i, bool first) -> Expr {
    if (max != kUnbounded && i > max) return empty();
    const bool may_stop = i - 1 >= min;
    if (i > prefix.size()) {  // only `item` from here: counted repetition
      const std::uint32_t lo = may_stop ? 0 : min - (i - 1);
      const std::uint32_t hi = max == kUnbounded ? kUnbounded : max - (i - 1);
      if (!first) return repeat(sequence({sep, *item}), lo, hi);
      Expr some = sequence({*item, repeat(sequence({sep, *item}), lo == 0 ? 0 : lo - 1,
                                          hi == kUnbounded ? kUnbounded : hi - 1)});
      return lo == 0 ? optional(std::move(some)) : some;
    }
    Expr here = first ? prefix[i - 1] : sequence({sep, prefix[i - 1]});
    Expr e = sequence({std::move(here), from(i + 1, false)});
    return may_stop ? optional(std::move(e)) : e;
  };
  return sequence({byte_of('['), json_.ws(), from(1, true), json_.ws(), byte_of(']')});
}

}  // namespace baton::grammar
