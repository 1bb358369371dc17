#include "baton/server/api/json_fields.h"

#include <cmath>
#include <limits>

#include "baton/engine/request.h"
#include "baton/server/http/api_error.h"

namespace baton::json_fields {

using nlohmann::json;

json parse_object(std::string_view body) {
  json value;
  try {
    value = json::parse(body);
  } catch (const json::parse_error& e) {
    // nlohmann's message holds the offending bytes, which may not be UTF-8 themselves.
    const bool utf8 = std::string_view(e.what()).find("UTF-8") != std::string_view::npos;
    throw ApiError(400,
                   std::string("the request body is not valid JSON: ") +
                       (utf8 ? "it is not valid UTF-8" : "a syntax error") + " at byte " +
                       std::to_string(e.byte),
                   "invalid_request_error", "invalid_json");
  } catch (const json::exception&) {
    // out_of_range 406: a number no double holds (1e999), found while parsing.
    throw ApiError(400, "the request body is not valid JSON: a number out of range",
                   "invalid_request_error", "invalid_json");
  }
  if (!value.is_object()) {
    throw ApiError(400, "the request body must be a JSON object", "invalid_request_error",
                   "invalid_json");
  }
  return value;
}

void check_fields(const json& object, const std::set<std::string>& known,
                  const std::set<std::string>& unsupported) {
  for (const auto& [key, value] : object.items()) {
    if (unsupported.count(key) != 0 && !value.is_null()) {
      throw bad_parameter(key, "'" + key + "' is not supported by baton", "unsupported_parameter");
    }
    if (known.count(key) == 0 && unsupported.count(key) == 0) {
      throw bad_parameter(key, "Unrecognized request argument supplied: " + key,
                          "unknown_parameter");
    }
  }
}

const json* field(const json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& value, const std::string& name, double low, double high) {
  if (!value.is_number()) throw bad_parameter(name, "'" + name + "' must be a number");
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < low || x > high) {
    std::string range = "[" + json(low).dump() + ", " + json(high).dump() + "]";
    throw bad_parameter(name, "'" + name + "' must be in " + range + "; got " + value.dump());
  }
  return x;
}

std::int64_t integer(const json& value, const std::string& name, std::int64_t low,
                     std::int64_t high) {
  if (!value.is_number_integer()) throw bad_parameter(name, "'" + name + "' must be an integer");
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw bad_parameter(name, "'" + name + "' is too large");
  }
  const auto x = value.get<std::int64_t>();
  if (x < low || x > high) {
    throw bad_parameter(name, "'" + name + "' must be in [" + std::to_string(low) + ", " +
                                  std::to_string(high) + "]; got " + std::to_string(x));
  }
  return x;
}

bool boolean(const json& value, const std::string& name) {
  if (!value.is_boolean()) throw bad_parameter(name, "'" + name + "' must be a boolean");
  return value.get<bool>();
}

std::string string(const json& value, const std::string& name) {
  if (!value.is_string()) throw bad_parameter(name, "'" + name + "' must be a string");
  return value.get<std::string>();
}

std::string model_name(const json& object) {
  const json* model = field(object, "model");
  if (model == nullptr) throw bad_parameter("model", "'model' is required");
  std::string name = string(*model, "model");
  if (name.empty()) throw bad_parameter("model", "'model' must not be empty");
  return name;
}

std::string requested_model(std::string_view body) {
  const json value = json::parse(body, nullptr, false);
  if (!value.is_object()) return {};
  const auto model = value.find("model");
  return model != value.end() && model->is_string() ? model->get<std::string>() : std::string();
}

std::vector<TokenId> token_list(const json& value, const std::string& name) {
  if (!value.is_array()) throw bad_parameter(name, "'" + name + "' must be a list of token ids");
  std::vector<TokenId> tokens;
  for (const json& t : value) {
    // Any id a TokenId holds: the route checks it against the model's vocabulary.
    tokens.push_back(static_cast<TokenId>(integer(t, name, std::numeric_limits<TokenId>::min(),
                                                  std::numeric_limits<TokenId>::max())));
  }
  if (tokens.empty()) throw bad_parameter(name, "'" + name + "' must not be empty");
  return tokens;
}

void check_vocabulary(const std::vector<TokenId>& tokens, std::size_t vocab_size,
                      const std::string& name, const std::string& model) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (in_vocabulary(tokens[i], vocab_size)) continue;
    // The engine's message for the same fault (a completion's prompt ids).
    throw bad_parameter(name, TokenOutsideVocabulary(TokenOutsideVocabulary::Field::prompt, i,
                                                     tokens[i], vocab_size, model)
                                  .message_for(name));
  }
}

void read_stream_options(
    const json& object, bool stream,
    const std::function<bool(const std::string& key, const json& value)>& read) {
  const json* options = field(object, "stream_options");
  if (options == nullptr) return;
  if (!stream) {
    throw bad_parameter("stream_options", "'stream_options' is only allowed with 'stream': true");
  }
  if (!options->is_object()) {
    throw bad_parameter("stream_options", "'stream_options' must be an object");
  }
  for (const auto& [key, value] : options->items()) {
    if (!read(key, value)) {
      throw bad_parameter("stream_options." + key,
                          "Unrecognized request argument supplied: stream_options." + key,
                          "unknown_parameter");
    }
  }
}

}  // namespace baton::json_fields
