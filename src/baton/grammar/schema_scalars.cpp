// Strings and numbers of the JSON Schema compiler (schema_compiler.h).
#include <cmath>

#include "baton/grammar/grammar_limits.h"
#include "baton/grammar/number_ranges.h"
#include "baton/grammar/regex_compiler.h"
#include "baton/grammar/schema_compiler.h"

namespace baton::grammar {
namespace {

// String lengths are bounded further than other counts: each is a chain of small states.
constexpr std::uint32_t kMaxStringLength = 10'000;

// Formats as patterns. Dates are those of every year (February up to the 28th); times have
// an offset, as RFC 3339 wants; all of them ASCII without escapes.
constexpr const char* kDate =
    "\\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|"
    "(?:0[13578]|1[02])-31)";
constexpr const char* kTime =
    "(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)";

std::optional<std::string> format_pattern(std::string_view format) {
  if (format == "date") return std::string("^") + kDate + "$";
  if (format == "time") return std::string("^") + kTime + "$";
  if (format == "date-time") return std::string("^") + kDate + "T" + kTime + "$";
  if (format == "uuid")
    return "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
  if (format == "email")
    return "^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){1,4}$";
  if (format == "ipv4") {
    const std::string octet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
    return "^" + octet + "(?:\\." + octet + "){3}$";
  }
  return std::nullopt;  // unknown formats only annotate
}

std::uint32_t length_keyword(const SchemaJson& schema, const char* key, std::uint32_t fallback,
                             const std::string& path) {
  const auto it = schema.find(key);
  if (it == schema.end()) return fallback;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
    throw SchemaError(key, pointer_child(path, key), "must be a non-negative integer");
  if (it->get<std::int64_t>() > kMaxStringLength)
    throw SchemaError(key, pointer_child(path, key),
                      "over the limit of " + std::to_string(kMaxStringLength));
  return static_cast<std::uint32_t>(it->get<std::int64_t>());
}

std::optional<double> bound(const SchemaJson& schema, const char* key, const std::string& path) {
  const auto it = schema.find(key);
  if (it == schema.end()) return std::nullopt;
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    throw SchemaError(key, pointer_child(path, key), "must be a number");
  return it->get<double>();
}

}  // namespace

Expr SchemaCompiler::string(const SchemaJson& schema, const std::string& path) {
  const std::uint32_t min = length_keyword(schema, "minLength", 0, path);
  const std::uint32_t max = length_keyword(schema, "maxLength", kUnbounded, path);
  if (min > max)
    throw SchemaError("minLength", pointer_child(path, "minLength"), "greater than maxLength");
  std::optional<std::string> pattern;
  std::string keyword = "pattern";
  if (const auto it = schema.find("pattern"); it != schema.end()) {
    if (!it->is_string())
      throw SchemaError("pattern", pointer_child(path, "pattern"), "must be a string");
    pattern = it->get<std::string>();
  }
  if (const auto it = schema.find("format"); it != schema.end() && it->is_string()) {
    if (auto format = format_pattern(it->get<std::string>())) {
      if (pattern)
        throw SchemaError("format", pointer_child(path, "format"),
                          "together with pattern is not supported");
      pattern = std::move(format);
      keyword = "format";
    }
  }
  if (!pattern) return json_.string_of_length(min, max);
  if (min != 0 || max != kUnbounded)
    throw SchemaError(min != 0 ? "minLength" : "maxLength",
                      pointer_child(path, min != 0 ? "minLength" : "maxLength"),
                      "together with " + keyword + " is not supported");
  try {
    return sequence(
        {byte_of('"'),
         compile_pattern(*pattern, CharEncoding::json_string, PatternMatch::search, &grammar_),
         byte_of('"')});
  } catch (const PatternError& e) {
    throw SchemaError(keyword, pointer_child(path, keyword), e.what());
  }
}

Expr SchemaCompiler::number(const SchemaJson& schema, bool integer, const std::string& path) {
  NumberBounds bounds{.min = bound(schema, "minimum", path), .max = bound(schema, "maximum", path)};
  // exclusiveMinimum: a number (2019 on) or, beside minimum, a boolean (draft 4).
  for (const char* key : {"exclusiveMinimum", "exclusiveMaximum"}) {
    const auto it = schema.find(key);
    if (it == schema.end()) continue;
    const bool is_min = key[9] == 'M' && key[10] == 'i';
    std::optional<double>& side = is_min ? bounds.min : bounds.max;
    bool& exclusive = is_min ? bounds.exclusive_min : bounds.exclusive_max;
    if (it->is_boolean()) {
      exclusive = it->get<bool>() && side.has_value();
      continue;
    }
    const std::optional<double> value = bound(schema, key, path);
    // The tighter of the two bounds wins; on a tie, exclusive.
    if (!side || (is_min ? *value >= *side : *value <= *side)) {
      side = value;
      exclusive = true;
    }
  }
  if (!bounds.min && !bounds.max) return integer ? json_.integer() : json_.number();
  if (integer) {
    const auto range = integer_bounds(bounds);
    if (!range)
      throw SchemaError(bounds.min ? "minimum" : "maximum", path,
                        "no integer lies within the bounds");
    return integer_range(range->first, range->second);
  }
  Expr out = bounded_number(bounds);
  if (out.kind == Expr::Kind::choice && out.items.empty())
    throw SchemaError(bounds.min ? "minimum" : "maximum", path,
                      "no number the grammar writes lies within the bounds");
  return out;
}

}  // namespace baton::grammar
