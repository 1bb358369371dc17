// The checks every request parser of the server shares (openai_request, peer_requests): a
// body that must be a JSON object, fields known or refused, and typed, ranged values. Each
// mistake is an ApiError (400) naming the field.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "baton/model/tokenizer/token_id.h"

namespace baton::json_fields {

// The body as a JSON object; 400 invalid_json otherwise.
nlohmann::json parse_object(std::string_view body);

// Every field of `object` is known or unsupported (refused unless null); the rest are
// refused as unknown, as the OpenAI API does.
void check_fields(const nlohmann::json& object, const std::set<std::string>& known,
                  const std::set<std::string>& unsupported);

// The field `name`, or null when it is absent or JSON null.
const nlohmann::json* field(const nlohmann::json& object, const char* name);

double number(const nlohmann::json& value, const std::string& name, double low, double high);
std::int64_t integer(const nlohmann::json& value, const std::string& name, std::int64_t low,
                     std::int64_t high);
bool boolean(const nlohmann::json& value, const std::string& name);
std::string string(const nlohmann::json& value, const std::string& name);

// The required, non-empty "model".
std::string model_name(const nlohmann::json& object);

// The "model" string of a body, or empty when the body has none (for counting a request
// that failed before its parser read it); never throws.
std::string requested_model(std::string_view body);

// `object`'s "stream_options", when present: allowed only with `stream`, an object, and
// each of its keys, in order, handed to `read`, which reads the value and returns false
// for a key it does not know (refused then: 400 unknown_parameter naming it).
void read_stream_options(
    const nlohmann::json& object, bool stream,
    const std::function<bool(const std::string& key, const nlohmann::json& value)>& read);

// A non-empty JSON array of integers that fit a TokenId; `name` for errors. Whether they
// are in a model's vocabulary is check_vocabulary()'s to say, once the model is known.
std::vector<TokenId> token_list(const nlohmann::json& value, const std::string& name);

// Every id of `tokens` is in [0, vocab_size); else 400 naming the field `name`, the
// offending id and its index, and the model's range of ids.
void check_vocabulary(const std::vector<TokenId>& tokens, std::size_t vocab_size,
                      const std::string& name, const std::string& model);

}  // namespace baton::json_fields
