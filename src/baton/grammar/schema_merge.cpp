#include "baton/grammar/schema_merge.h"

#include <algorithm>

namespace baton::grammar {
namespace {

constexpr int kMaxRefChain = 32;

std::vector<std::string> type_list(const SchemaJson& t) {
  std::vector<std::string> out;
  for (const auto& one : t.is_array() ? t : SchemaJson::array({t}))
    if (one.is_string()) out.push_back(one.get<std::string>());
  return out;
}

SchemaJson intersect_types(const SchemaJson& a, const SchemaJson& b, const std::string& where) {
  const auto left = type_list(a);
  const auto right = type_list(b);
  SchemaJson out = SchemaJson::array();
  const auto has = [](const std::vector<std::string>& v, const char* t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  for (const std::string& t : left) {
    if (has(right, t.c_str()))
      out.push_back(t);
    else if (t == "integer" && has(right, "number"))
      out.push_back(t);
    else if (t == "number" && has(right, "integer"))
      out.push_back("integer");
  }
  if (out.empty())
    throw SchemaError("type", where, "the schemas that must both hold share no type");
  return out.size() == 1 ? out[0] : out;
}

// A schema object with its $ref (and theirs) merged in.
SchemaJson expand(const SchemaJson& schema, const std::string& path, const SchemaJson& root) {
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return SchemaJson::object();
    throw SchemaError("false", path, "the schema false accepts no value");
  }
  if (!schema.is_object()) throw SchemaError("", path, "a schema must be an object or a boolean");
  SchemaJson out = schema;
  for (int i = 0; out.contains("$ref"); ++i) {
    if (i == kMaxRefChain) throw SchemaError("$ref", path, "a chain of more than 32 references");
    const std::string ref = out["$ref"].is_string() ? out["$ref"].get<std::string>() : "";
    const SchemaJson& target = resolve_reference(root, ref, path);
    out.erase("$ref");
    if (target.is_boolean()) {
      if (!target.get<bool>()) throw SchemaError("$ref", path, "refers to the schema false");
      continue;
    }
    for (const auto& [key, value] : target.items())
      if (!out.contains(key))
        out[key] = value;
      else if (out[key] != value && !is_annotation(key))
        out = merge_schemas(out, SchemaJson{{key, value}}, path, root);
  }
  return out;
}

bool forbids_others(const SchemaJson& schema) {
  const auto it = schema.find("additionalProperties");
  return it != schema.end() && *it != true;
}

}  // namespace

const SchemaJson& resolve_reference(const SchemaJson& root, const std::string& ref,
                                    const std::string& path) {
  const std::string where = pointer_child(path, "$ref");
  if (ref.empty() || ref[0] != '#')
    throw SchemaError("$ref", where, "only references into the same schema (#...) are supported");
  try {
    std::string pointer;  // the URI fragment, percent-decoded
    for (std::size_t i = 1; i < ref.size(); ++i) {
      if (ref[i] == '%' && i + 2 < ref.size()) {
        pointer += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        pointer += ref[i];
      }
    }
    return root.at(SchemaJson::json_pointer(pointer));
  } catch (const std::exception&) {
    throw SchemaError("$ref", where, "'" + ref + "' does not resolve in the schema");
  }
}

SchemaJson merge_schemas(const SchemaJson& a_in, const SchemaJson& b_in, const std::string& path,
                         const SchemaJson& root) {
  SchemaJson a = expand(a_in, path, root);
  const SchemaJson b = expand(b_in, path, root);
  for (const auto& other : {std::pair<const SchemaJson*, const SchemaJson*>{&a, &b},
                            std::pair<const SchemaJson*, const SchemaJson*>{&b, &a}}) {
    if (!forbids_others(*other.first) || !other.second->contains("properties")) continue;
    for (const auto& [name, ignored] : (*other.second)["properties"].items())
      if (!other.first->contains("properties") || !(*other.first)["properties"].contains(name))
        throw SchemaError("additionalProperties", pointer_child(path, "additionalProperties"),
                          "forbids property '" + name + "' of a schema that must also hold");
  }
  for (const auto& [key, value] : b.items()) {
    const std::string where = pointer_child(path, key);
    if (!a.contains(key)) {
      a[key] = value;
    } else if (is_annotation(key) || a[key] == value) {
    } else if (key == "required" && value.is_array() && a[key].is_array()) {
      for (const auto& name : value)
        if (std::find(a[key].begin(), a[key].end(), name) == a[key].end()) a[key].push_back(name);
    } else if (key == "type") {
      a[key] = intersect_types(a[key], value, where);
    } else if (key == "properties" && value.is_object() && a[key].is_object()) {
      for (const auto& [name, schema] : value.items())
        if (!a[key].contains(name))
          a[key][name] = schema;
        else if (a[key][name] != schema)
          a[key][name] = SchemaJson{{"allOf", SchemaJson::array({a[key][name], schema})}};
    } else if ((key == "minimum" || key == "minLength" || key == "minItems") && value.is_number() &&
               a[key].is_number()) {
      a[key] = std::max(a[key].get<double>(), value.get<double>()) == value.get<double>() ? value
                                                                                          : a[key];
    } else if ((key == "maximum" || key == "maxLength" || key == "maxItems") && value.is_number() &&
               a[key].is_number()) {
      a[key] = std::min(a[key].get<double>(), value.get<double>()) == value.get<double>() ? value
                                                                                          : a[key];
    } else {
      throw SchemaError(key, where, "set differently by schemas that must both hold");
    }
  }
  return a;
}

}  // namespace baton::grammar
