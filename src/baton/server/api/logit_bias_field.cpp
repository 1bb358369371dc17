#include "baton/server/api/logit_bias_field.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "baton/server/http/api_error.h"

namespace baton {
namespace {

using nlohmann::json;

constexpr const char* kParam = "logit_bias";

// The key as the client wrote it, quoted and cut short for an error message.
std::string shown(const std::string& key) {
  const std::string quoted = json(key).dump(-1, ' ', false, json::error_handler_t::replace);
  return quoted.size() <= 40 ? quoted : quoted.substr(0, 36) + "...\"";
}

// A key is a token id written in decimal: digits only (no sign, space or exponent), and
// small enough for a TokenId; the vocabulary is checked later, by the route.
TokenId token_of(const std::string& key) {
  if (key.empty() || key.find_first_not_of("0123456789") != std::string::npos) {
    throw bad_parameter(kParam,
                        "'logit_bias' keys must be token ids written as decimal "
                        "integers >= 0, like \"1234\"; got key " +
                            shown(key));
  }
  const std::size_t first = std::min(key.find_first_not_of('0'), key.size() - 1);
  const std::string digits = key.substr(first);  // "007" is 7
  const long long id = digits.size() <= 10 ? std::stoll(digits) : -1;
  if (id < 0 || id > std::numeric_limits<TokenId>::max()) {
    throw bad_parameter(kParam, "'logit_bias' key " + shown(key) +
                                    " is a token id out of range: too large for any "
                                    "vocabulary (token ids are at most " +
                                    std::to_string(std::numeric_limits<TokenId>::max()) + ")");
  }
  return static_cast<TokenId>(id);
}

float bias_of(const std::string& key, const json& value) {
  if (!value.is_number()) {
    throw bad_parameter(kParam, "'logit_bias' value of key " + shown(key) +
                                    " must be a number in [-100, 100]; got " + value.dump());
  }
  const double x = value.get<double>();
  if (!std::isfinite(x) || std::abs(x) > kMaxLogitBias) {
    throw bad_parameter(kParam, "'logit_bias' value of key " + shown(key) +
                                    " must be in [-100, 100]; got " + value.dump());
  }
  return static_cast<float>(x);
}

}  // namespace

LogitBias parse_logit_bias(const json& value) {
  if (!value.is_object()) {
    throw bad_parameter(kParam,
                        "'logit_bias' must be an object mapping token ids to biases, "
                        "like {\"1234\": -100}");
  }
  if (value.size() > kMaxLogitBiasEntries) {
    throw bad_parameter(kParam, "'logit_bias' holds " + std::to_string(value.size()) +
                                    " entries; at most " + std::to_string(kMaxLogitBiasEntries) +
                                    " are allowed");
  }
  LogitBias bias;
  for (const auto& [key, entry] : value.items()) {
    bias.push_back({token_of(key), bias_of(key, entry)});
  }
  std::sort(bias.begin(), bias.end(),
            [](const LogitBiasEntry& a, const LogitBiasEntry& b) { return a.token < b.token; });
  for (std::size_t i = 1; i < bias.size(); ++i) {
    if (bias[i].token == bias[i - 1].token) {  // "7" and "007"
      throw bad_parameter(kParam, "'logit_bias' names token " + std::to_string(bias[i].token) +
                                      " twice (keys with leading zeros)");
    }
  }
  return bias;
}

}  // namespace baton
